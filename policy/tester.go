package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Tester checks what policies decide for objects, for table-driven tests of
// policies written in Go:
//
//	m, err := manifest.LoadFiles("testdata/replicas.yaml")
//	...
//	tester, err := policy.NewTester(m, policy.Options{})
//	...
//	err = tester.CheckCreate(ctx, deployment, policy.Expect{Denied: true, Message: "at most 5 replicas"})
//
// Its methods return errors instead of taking a *testing.T, so the package
// does not import testing; report the error with t.Error. A Tester is
// immutable and safe for concurrent use, so parallel subtests can share one.
type Tester struct {
	ev        *Evaluator
	resources ResourceMapper
}

// NewTester compiles the policies and bindings of m, mutating ones
// (m.MutatingPolicies and m.MutatingBindings, added to those of opts)
// included. The fields of opts
// that are nil are filled from m the way a cluster holding m would answer:
//
//   - Params: a [params.Static] of m.Objects; a namespaced object without a
//     namespace lives in "default", as kubectl would create it.
//   - Namespaces: m.Namespaces; any other namespace exists too, with only
//     the kubernetes.io/metadata.name label the API server sets, so tests
//     need not declare the namespaces of their objects.
//   - Resources: the built-in kinds of Kubernetes 1.37 and the kinds of the
//     CRDs in m.CRDs and opts.CRDs ([manifest.NewResourceMapper]); as for
//     [Compile], setting both opts.Resources and opts.CRDs is an error, and
//     with opts.Resources set m.CRDs play no part.
//
// Unlike [Compile], NewTester fails when the API server would refuse m
// ([Refusals], in the NewExpressions environment of opts.Env's version) or
// when [Evaluator.Issues] is not empty: a test should not pass on policies a
// cluster could not hold, or because an expression failed to compile.
func NewTester(m *manifest.Set, opts Options) (*Tester, error) {
	if m == nil {
		return nil, errors.New("manifests are nil")
	}
	if rs := Refusals(opts.Env, m); len(rs) > 0 {
		return nil, refusalsError(rs)
	}
	resources := opts.Resources
	if resources == nil {
		// Compile builds the same mapper from opts.CRDs, which also give
		// the mutating policies their schemas.
		opts.CRDs = slices.Concat(m.CRDs, opts.CRDs)
		mapper, err := manifest.NewResourceMapper(opts.CRDs...)
		if err != nil {
			return nil, err
		}
		resources = mapper
	}
	if opts.Params == nil {
		objs := make([]runtime.Object, 0, len(m.Objects))
		for _, o := range m.Objects {
			if u, ok := o.(*unstructured.Unstructured); ok && u.GetNamespace() == "" {
				if _, namespaced, err := resources.ResourceFor(u.GroupVersionKind()); err == nil && namespaced {
					u = u.DeepCopy()
					u.SetNamespace(metav1.NamespaceDefault)
					o = u
				}
			}
			objs = append(objs, o)
		}
		src, err := params.NewStatic(objs...)
		if err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		opts.Params = src
	}
	if opts.Namespaces == nil {
		known := make(testerNamespaces, len(m.Namespaces))
		for _, ns := range m.Namespaces {
			known[ns.Name] = ns
		}
		opts.Namespaces = known
	}
	opts.MutatingPolicies = slices.Concat(m.MutatingPolicies, opts.MutatingPolicies)
	opts.MutatingBindings = slices.Concat(m.MutatingBindings, opts.MutatingBindings)
	ev, err := Compile(m.Policies, m.Bindings, opts)
	if err != nil {
		return nil, err
	}
	if err := ev.Issues().ToAggregate(); err != nil {
		return nil, fmt.Errorf("policies have issues: %w", err)
	}
	return &Tester{ev: ev, resources: resources}, nil
}

// testerNamespaces serves declared namespaces and makes up the others.
type testerNamespaces map[string]*corev1.Namespace

func (n testerNamespaces) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := n[name]; ok {
		return ns, nil
	}
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelMetadataName: name}},
	}, nil
}

// Evaluator returns the compiled evaluator.
func (t *Tester) Evaluator() *Evaluator { return t.ev }

// Request builds the request the API server would send for op on obj and
// oldObj, with the Tester's resources: [NewRequest] with
// RequestOptions.Resources set. Set other fields, such as UserInfo, on the
// result.
//
// An unstructured object of a kind k8s.io/api defines is first checked as
// the API server decodes it under strict field validation (kubectl's
// default), with [manifest.DecodeWith] and Options.Strict, as the test
// runner checks its objects: an unknown field ("spec.replica") or a value
// of the wrong type is an error, not an object the policies then judge
// without the field. Typed objects cannot hold such mistakes.
func (t *Tester) Request(op admissionv1.Operation, obj, oldObj runtime.Object) (*Request, error) {
	if err := strictCheck("object", obj); err != nil {
		return nil, err
	}
	if err := strictCheck("oldObject", oldObj); err != nil {
		return nil, err
	}
	return NewRequest(op, obj, oldObj, RequestOptions{Resources: t.resources})
}

// strictCheck reports what strict decoding would reject in obj when it is
// an unstructured object with apiVersion and kind.
func strictCheck(name string, obj runtime.Object) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil || u.GroupVersionKind().Empty() {
		return nil
	}
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if _, err := manifest.DecodeWith(raw, "", manifest.Options{Strict: true}); err != nil {
		var me *manifest.Error
		if errors.As(err, &me) {
			return fmt.Errorf("%s %s: %w", name, u.GroupVersionKind().Kind, me.Err)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Check evaluates req and compares the decision with want; the error
// describes every difference, or why evaluation failed. The decision is
// returned whenever evaluation succeeded, for further checks.
func (t *Tester) Check(ctx context.Context, req *Request, want Expect) (*Decision, error) {
	d, err := t.ev.Evaluate(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := want.Match(d); err != nil {
		return d, fmt.Errorf("%s %s: %w", req.Operation, describe(req), err)
	}
	return d, nil
}

// CheckCreate checks the creation of obj; see [Tester.Request] and
// [Tester.Check]. The metadata of a built-in object is first checked as
// the API server checks it before any validating admission policy runs
// (its kind's name rule, the namespace, labels, annotations, finalizers,
// owner references; see typecheck.ValidateBuiltinMetadata): an object the
// server refuses with 422 Invalid is an error, such as `object: the API
// server refuses to create it: Deployment.apps "Web" is invalid:
// metadata.name: Invalid value: "Web": ...`, since no policy decision
// would follow. The rest of the object, metadata on update and custom
// resources are not checked here (the test runner checks custom resources
// against their CRDs).
func (t *Tester) CheckCreate(ctx context.Context, obj runtime.Object, want Expect) error {
	return t.check(ctx, admissionv1.Create, obj, nil, want)
}

// CheckUpdate checks the update of oldObj to obj.
func (t *Tester) CheckUpdate(ctx context.Context, obj, oldObj runtime.Object, want Expect) error {
	return t.check(ctx, admissionv1.Update, obj, oldObj, want)
}

// CheckDelete checks the deletion of oldObj.
func (t *Tester) CheckDelete(ctx context.Context, oldObj runtime.Object, want Expect) error {
	return t.check(ctx, admissionv1.Delete, nil, oldObj, want)
}

func (t *Tester) check(ctx context.Context, op admissionv1.Operation, obj, oldObj runtime.Object, want Expect) error {
	req, err := t.Request(op, obj, oldObj)
	if err != nil {
		return err
	}
	if err := createRefusal(req); err != nil {
		return fmt.Errorf("object: the API server refuses to create it: %w", err)
	}
	_, err = t.Check(ctx, req, want)
	return err
}

// describe names the request's object, e.g. `deployments.apps "web" in
// namespace "team-a"`.
func describe(r *Request) string {
	s := fmt.Sprintf("%s %q", r.Resource.GroupResource(), r.Name)
	if r.Namespace != "" {
		s += fmt.Sprintf(" in namespace %q", r.Namespace)
	}
	return s
}

// Expect describes the decision a test expects. The zero value expects the
// request to be allowed without warnings.
type Expect struct {
	// Denied tells whether the request must be denied.
	Denied bool
	// Message, if not empty, must occur in the denial's status message,
	// which the API server prefixes with the object and the policy, e.g.
	// `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy
	// 'max-replicas' with binding 'max-replicas-binding' denied request: `.
	Message string
	// Reason, if not empty, must be the denial's status reason, such as
	// Forbidden or Invalid.
	Reason metav1.StatusReason
	// Warnings must match the decision's warnings one for one and in
	// order, each expected text occurring in the actual warning; nil
	// expects no warnings.
	Warnings []string
	// AuditAnnotations lists annotations that must be present with these
	// exact values; others are not checked.
	AuditAnnotations map[string]string
}

// Match reports how d differs from e; nil when it matches.
func (e Expect) Match(d *Decision) error {
	if d == nil {
		return errors.New("decision is nil")
	}
	var diffs []string
	var msg string
	var reason metav1.StatusReason
	if d.Status != nil {
		msg, reason = d.Status.Message, d.Status.Reason
	}
	switch {
	case e.Denied && d.Allowed:
		diffs = append(diffs, "allowed, want denied")
	case !e.Denied && !d.Allowed:
		diffs = append(diffs, fmt.Sprintf("denied (%q), want allowed", msg))
	case e.Denied:
		if e.Message != "" && !strings.Contains(msg, e.Message) {
			diffs = append(diffs, fmt.Sprintf("message = %q, want it to contain %q", msg, e.Message))
		}
		if e.Reason != "" && reason != e.Reason {
			diffs = append(diffs, fmt.Sprintf("reason = %s, want %s", reason, e.Reason))
		}
	}
	if len(d.Warnings) != len(e.Warnings) {
		diffs = append(diffs, fmt.Sprintf("warnings = %q, want %d matching %q", d.Warnings, len(e.Warnings), e.Warnings))
	} else {
		for i, w := range e.Warnings {
			if !strings.Contains(d.Warnings[i], w) {
				diffs = append(diffs, fmt.Sprintf("warnings[%d] = %q, want it to contain %q", i, d.Warnings[i], w))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.AuditAnnotations)) {
		got, ok := d.AuditAnnotations[k]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("audit annotation %q missing, want %q", k, e.AuditAnnotations[k]))
		case got != e.AuditAnnotations[k]:
			diffs = append(diffs, fmt.Sprintf("audit annotation %q = %q, want %q", k, got, e.AuditAnnotations[k]))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	return errors.New(strings.Join(diffs, "; "))
}
