package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vapkit/vapkit/policy"
)

// Shadow reports which objects a cluster already holds a candidate set of
// policies would deny or warn on: the live-cluster "what would break"
// before a policy is enabled. Each object is evaluated as if it were
// created anew (or, with Operation UPDATE, updated to itself).
type Shadow struct {
	// Reader lists the objects; a manager's client reads them from its
	// cache.
	Reader client.Reader
	// Evaluator holds the candidate policies; compile it with the
	// cluster's namespaces and params (see [ClientNamespaces],
	// [ClientParams]). Bindings with validationActions [Warn] or [Audit]
	// are reported as warnings or annotations, so the candidate need not
	// be bound to Deny.
	Evaluator *policy.Evaluator
	// Kinds are the kinds to list; [KindsOf] derives them from the
	// policies' rules.
	Kinds []schema.GroupVersionKind
	// Operation is CREATE (the default) or UPDATE.
	Operation admissionv1.Operation
}

// Finding is one object the candidate policies deny or warn on.
type Finding struct {
	// Kind, Namespace and Name identify the object.
	Kind            schema.GroupVersionKind
	Namespace, Name string
	// Denied and Message: the denial, as the API server would answer it.
	Denied  bool
	Message string
	// Warnings are the warnings the request would get.
	Warnings []string
}

// Run lists every object of the kinds and evaluates it. Findings are in
// kind, namespace, name order; objects allowed without warnings are left
// out. It stops at the first list or evaluation error.
func (s *Shadow) Run(ctx context.Context) ([]Finding, error) {
	op := s.Operation
	if op == "" {
		op = admissionv1.Create
	}
	var out []Finding
	for _, gvk := range s.Kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := s.Reader.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing %v: %w", gvk, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetGroupVersionKind(gvk)
			var old runtime.Object
			if op == admissionv1.Update {
				old = obj
			}
			req, err := s.Evaluator.Request(op, obj, old, policy.RequestOptions{})
			if err != nil {
				return nil, fmt.Errorf("%v %s/%s: %w", gvk, obj.GetNamespace(), obj.GetName(), err)
			}
			d, err := s.Evaluator.Evaluate(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("%v %s/%s: %w", gvk, obj.GetNamespace(), obj.GetName(), err)
			}
			if d.Allowed && len(d.Warnings) == 0 {
				continue
			}
			f := Finding{Kind: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName(), Denied: !d.Allowed, Warnings: d.Warnings}
			if d.Status != nil {
				f.Message = d.Status.Message
			}
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Kind.String(), b.Kind.String()), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// KindsOf returns the kinds the policies' resourceRules name explicitly,
// through m, in a stable order; rules with a wildcard group, version or
// resource cannot be listed without discovery and are returned in skipped
// as text.
func KindsOf(m policy.ResourceMapper, policies []*admissionregistrationv1.ValidatingAdmissionPolicy) (kinds []schema.GroupVersionKind, skipped []string) {
	seen := map[schema.GroupVersionKind]bool{}
	for _, p := range policies {
		if p.Spec.MatchConstraints == nil {
			continue
		}
		for _, r := range p.Spec.MatchConstraints.ResourceRules {
			for _, g := range r.APIGroups {
				for _, v := range r.APIVersions {
					for _, res := range r.Resources {
						if g == "*" || v == "*" || res == "*" || strings.Contains(res, "/") {
							skipped = append(skipped, fmt.Sprintf("%s: %s/%s %s", p.Name, g, v, res))
							continue
						}
						k := m.KindFor(schema.GroupVersionResource{Group: g, Version: v, Resource: res}, "")
						if k.Empty() {
							skipped = append(skipped, fmt.Sprintf("%s: %s/%s %s (unknown resource)", p.Name, g, v, res))
							continue
						}
						if !seen[k] {
							seen[k] = true
							kinds = append(kinds, k)
						}
					}
				}
			}
		}
	}
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int { return cmp.Compare(a.String(), b.String()) })
	return kinds, skipped
}
