// Package casefile is the test harness of vapkit's case format: one file
// holds a small cluster (policies, bindings, namespaces, parameter objects,
// CRDs, authorizer rules) and one AdmissionReview request, and an expected
// file holds the AdmissionReview response the API server gives for it. The
// conformance module replays the same files against k8s.io/apiserver, the
// policy package's tests and the examples' test runner against vapkit, so a
// case written once checks both.
//
// It sits above the evaluator: it imports [github.com/vapkit/vapkit/policy]
// and builds an Evaluator per case the way a cluster holding the case's
// objects would answer. Programs that only evaluate policies do not need
// it; programs that test policies with files can:
//
//	c, err := casefile.ParseFile("cases/max-replicas.yaml")
//	resp, err := c.Review(ctx) // the AdmissionResponse vapkit gives
//	want, err := casefile.ParseExpected(expectedJSON)
//	ok := slices.Contains(want.Outcomes(), casefile.Project(resp))
//
// Authorizer rules (vapkit.dev/v1alpha1 AuthorizerRules documents) are
// served by [RuleAuthorizer], which any test may use as an
// [github.com/vapkit/vapkit/celenv/authz.Authorizer].
package casefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Case is one parsed case file.
type Case struct {
	// Name is the name given to Parse (the file name for ParseFile).
	Name string
	// Policies and Bindings are the validating policies and their
	// bindings, converted to v1 and defaulted by
	// [github.com/vapkit/vapkit/policy/manifest.Load].
	Policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// MutatingPolicies and MutatingBindings run before the validating
	// policies, as the API server chains them.
	MutatingPolicies []*admissionregistrationv1.MutatingAdmissionPolicy
	MutatingBindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding
	// Namespaces are the cluster's namespaces: a request in a namespace not
	// declared is denied as the API server denies it (404).
	Namespaces []*corev1.Namespace
	// CRDs are the CustomResourceDefinitions whose kinds exist.
	CRDs []*unstructured.Unstructured
	// Params are every other object: parameter resources of any kind.
	Params []runtime.Object
	// Authorizer holds the rules of the AuthorizerRules document, if any.
	Authorizer RuleAuthorizer
	// AdmissionReview is the request to decide.
	AdmissionReview *admissionv1.AdmissionReview
}

// ParseFile reads a case file.
func ParseFile(path string) (*Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse reads a case from data; name is used in error messages.
func Parse(data []byte, name string) (*Case, error) {
	m, err := manifest.Load(data, name)
	if err != nil {
		return nil, err
	}
	if len(m.Reviews) != 1 || m.Reviews[0].Request == nil {
		return nil, fmt.Errorf("%s: a case needs exactly one AdmissionReview with a request, found %d", name, len(m.Reviews))
	}
	c := &Case{Name: name, Policies: m.Policies, Bindings: m.Bindings, Namespaces: m.Namespaces, CRDs: m.CRDs, AdmissionReview: m.Reviews[0],
		MutatingPolicies: m.MutatingPolicies, MutatingBindings: m.MutatingBindings}
	for _, o := range m.Objects {
		u, ok := o.(*unstructured.Unstructured)
		if !ok || u.GroupVersionKind() != authorizerRulesKind {
			c.Params = append(c.Params, o)
			continue
		}
		raw, err := json.Marshal(u.Object["rules"])
		if err != nil {
			return nil, fmt.Errorf("%s: AuthorizerRules: %w", name, err)
		}
		var rules RuleAuthorizer
		if err := json.Unmarshal(raw, &rules); err != nil {
			return nil, fmt.Errorf("%s: AuthorizerRules: rules: %w", name, err)
		}
		c.Authorizer = append(c.Authorizer, rules...)
	}
	return c, nil
}

var authorizerRulesKind = schema.GroupVersionKind{Group: "vapkit.dev", Version: "v1alpha1", Kind: "AuthorizerRules"}

// Compile builds the evaluator and request of the case with the default
// options (Kubernetes 1.37).
func (c *Case) Compile() (*policy.Evaluator, *policy.Request, error) {
	return c.CompileWith(Options{})
}

// CompileWith builds the evaluator and request of the case with o.
func (c *Case) CompileWith(o Options) (*policy.Evaluator, *policy.Request, error) {
	mapper, err := manifest.NewResourceMapper(c.CRDs...)
	if err != nil {
		return nil, nil, err
	}
	// A namespaced param written without a namespace lives in default.
	objs := make([]runtime.Object, 0, len(c.Params))
	for _, p := range c.Params {
		if u, ok := p.(*unstructured.Unstructured); ok && u.GetNamespace() == "" {
			if _, namespaced, err := mapper.ResourceFor(u.GroupVersionKind()); err == nil && namespaced {
				u = u.DeepCopy()
				u.SetNamespace("default")
				p = u
			}
		}
		objs = append(objs, p)
	}
	src, err := params.NewStatic(objs...)
	if err != nil {
		return nil, nil, err
	}
	ns := matching.NewNamespaceMap(c.Namespaces...)
	opts := policy.Options{Params: src, Namespaces: ns, Resources: mapper,
		MutatingPolicies: c.MutatingPolicies, MutatingBindings: c.MutatingBindings}
	if c.Authorizer != nil {
		opts.Authorizer = c.Authorizer
	}
	o.apply(&opts)
	ev, err := policy.Compile(c.Policies, c.Bindings, opts)
	if err != nil {
		return nil, nil, err
	}
	req, err := policy.RequestFromAdmission(c.AdmissionReview.Request)
	if err != nil {
		return nil, nil, err
	}
	if req.Options == nil {
		req.Options = defaultOptions(req.Operation)
	}
	return ev, req, nil
}

// defaultOptions returns the options object the API server passes when a
// request carries none.
func defaultOptions(op admissionv1.Operation) runtime.Object {
	tm := func(kind string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: kind} }
	switch op {
	case admissionv1.Create:
		return &metav1.CreateOptions{TypeMeta: tm("CreateOptions")}
	case admissionv1.Update:
		return &metav1.UpdateOptions{TypeMeta: tm("UpdateOptions")}
	case admissionv1.Delete:
		return &metav1.DeleteOptions{TypeMeta: tm("DeleteOptions")}
	}
	return nil
}

// Review evaluates the case and returns the response vapkit gives.
func (c *Case) Review(ctx context.Context) (*admissionv1.AdmissionResponse, error) {
	ev, req, err := c.Compile()
	if err != nil {
		return nil, err
	}
	d, err := ev.Evaluate(ctx, req)
	if err != nil {
		return nil, err
	}
	return d.AdmissionResponse(c.AdmissionReview.Request.UID), nil
}

// Expected is an expected file: the response and, for order-dependent
// cases, every outcome upstream can produce.
type Expected struct {
	// Response is the response the API server gave.
	Response *admissionv1.AdmissionResponse
	// Alternatives are the other responses it may give when the outcome
	// depends on an order the API server does not fix.
	Alternatives []*admissionv1.AdmissionResponse
}

// ParseExpected reads an expected file.
func ParseExpected(data []byte) (*Expected, error) {
	var doc struct {
		Response *admissionv1.AdmissionResponse `json:"response"`
		Oracle   *struct {
			Alternatives []json.RawMessage `json:"alternatives"`
		} `json:"oracle"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Response == nil {
		return nil, errors.New("expected file has no response")
	}
	e := &Expected{Response: doc.Response}
	if doc.Oracle != nil {
		for _, raw := range doc.Oracle.Alternatives {
			// An alternative is either a response or {"response": ...}.
			var wrapped struct {
				Response *admissionv1.AdmissionResponse `json:"response"`
			}
			if err := json.Unmarshal(raw, &wrapped); err == nil && wrapped.Response != nil {
				e.Alternatives = append(e.Alternatives, wrapped.Response)
				continue
			}
			var r admissionv1.AdmissionResponse
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, fmt.Errorf("oracle alternative: %w", err)
			}
			e.Alternatives = append(e.Alternatives, &r)
		}
	}
	return e, nil
}

// Comparable is the part of a response the case format compares: the
// verdict, the status's code, reason and message, the warnings and the
// audit annotations.
type Comparable struct {
	// Allowed is the verdict.
	Allowed bool `json:"allowed"`
	// Code, Reason and Message are those of the response's status.
	Code    int32  `json:"code,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Warnings are the response's warnings; nil when there are none.
	Warnings []string `json:"warnings,omitempty"`
	// AuditAnnotations are the response's audit annotations; nil when
	// there are none.
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
}

// Project extracts the compared fields of r.
func Project(r *admissionv1.AdmissionResponse) Comparable {
	c := Comparable{Allowed: r.Allowed, Warnings: r.Warnings, AuditAnnotations: r.AuditAnnotations}
	if r.Result != nil {
		c.Code, c.Reason, c.Message = r.Result.Code, string(r.Result.Reason), r.Result.Message
	}
	if len(c.Warnings) == 0 {
		c.Warnings = nil
	}
	if len(c.AuditAnnotations) == 0 {
		c.AuditAnnotations = nil
	}
	return c
}

// Outcomes returns the acceptable projections: the response and every
// alternative.
func (e *Expected) Outcomes() []Comparable {
	out := []Comparable{Project(e.Response)}
	for _, a := range e.Alternatives {
		out = append(out, Project(a))
	}
	return out
}

// String renders c compactly for test failures.
func (c Comparable) String() string {
	b, _ := json.MarshalIndent(c, "", "  ")
	return strings.TrimSpace(string(b))
}
