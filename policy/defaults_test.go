package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy"
)

// bareReplicaPolicy is a policy and binding as controller code builds them:
// no failurePolicy, matchPolicy, selectors or rule scope.
func bareReplicaPolicy() (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	rule := admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
	}}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "max-replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule}},
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 5", Message: "at most 5 replicas"}},
		},
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "max-replicas"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "max-replicas",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule}},
		},
	}
	return p, b
}

// defaulted returns copies with the defaults the API server stores, written
// out by hand so that the test does not depend on the code under test.
func defaulted(p *admissionregistrationv1.ValidatingAdmissionPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	p, b = p.DeepCopy(), b.DeepCopy()
	fail := admissionregistrationv1.Fail
	p.Spec.FailurePolicy = &fail
	for _, m := range []*admissionregistrationv1.MatchResources{p.Spec.MatchConstraints, b.Spec.MatchResources} {
		eq := admissionregistrationv1.Equivalent
		m.MatchPolicy = &eq
		m.NamespaceSelector = &metav1.LabelSelector{}
		m.ObjectSelector = &metav1.LabelSelector{}
		for i := range m.ResourceRules {
			all := admissionregistrationv1.AllScopes
			m.ResourceRules[i].Scope = &all
		}
	}
	return p, b
}

// TestCompileDefaults checks that a policy built as Go structs, without the
// fields the API server defaults, decides exactly as the defaulted one, and
// that Compile does not modify the caller's objects.
func TestCompileDefaults(t *testing.T) {
	bareP, bareB := bareReplicaPolicy()
	defP, defB := defaulted(bareP, bareB)
	origP, origB := bareP.DeepCopy(), bareB.DeepCopy()
	opts := policy.Options{Namespaces: matching.NewNamespaceMap(&corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{corev1.LabelMetadataName: "prod"}},
	})}
	bare, err := policy.Compile([]*admissionregistrationv1.ValidatingAdmissionPolicy{bareP}, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bareB}, opts)
	if err != nil {
		t.Fatalf("Compile(bare) error = %v", err)
	}
	def, err := policy.Compile([]*admissionregistrationv1.ValidatingAdmissionPolicy{defP}, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{defB}, opts)
	if err != nil {
		t.Fatalf("Compile(defaulted) error = %v", err)
	}
	if diff := cmp.Diff(origP, bareP); diff != "" {
		t.Errorf("Compile modified the policy (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(origB, bareB); diff != "" {
		t.Errorf("Compile modified the binding (-before +after):\n%s", diff)
	}
	for _, ev := range []*policy.Evaluator{bare, def} {
		if iss := ev.Issues(); len(iss) > 0 {
			t.Errorf("Issues() = %v, want none", iss)
		}
	}
	deploy := func(replicas int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "web", "namespace": "prod", "labels": map[string]any{"app": "web"}},
			"spec":     map[string]any{"replicas": replicas},
		}}
	}
	tests := []struct {
		name        string
		req         *policy.Request
		wantAllowed bool
	}{
		{"create within the limit", bareRequest(admissionv1.Create, deploy(3), nil), true},
		{"create over the limit", bareRequest(admissionv1.Create, deploy(7), nil), false},
		{"update over the limit", bareRequest(admissionv1.Update, deploy(9), deploy(1)), false},
		{"delete is not matched", bareRequest(admissionv1.Delete, nil, deploy(9)), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bare.Evaluate(t.Context(), tc.req)
			if err != nil {
				t.Fatalf("Evaluate(bare) error = %v", err)
			}
			want, err := def.Evaluate(t.Context(), tc.req)
			if err != nil {
				t.Fatalf("Evaluate(defaulted) error = %v", err)
			}
			if got.Allowed != tc.wantAllowed {
				t.Errorf("Allowed = %t, want %t (status %v)", got.Allowed, tc.wantAllowed, got.Status)
			}
			if diff := cmp.Diff(project(want), project(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("bare policy decides differently from the defaulted one (-defaulted +bare):\n%s", diff)
			}
		})
	}
}

func bareRequest(op admissionv1.Operation, obj, old *unstructured.Unstructured) *policy.Request {
	r := &policy.Request{
		Operation: op,
		Kind:      schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      "web", Namespace: "prod",
	}
	if obj != nil {
		r.Object = obj
	}
	if old != nil {
		r.OldObject = old
	}
	return r
}

// TestCompileAPIIssues checks that what the API server's validation rejects
// is reported as Issues with field paths, and that the request is still
// decided as the policies say.
func TestCompileAPIIssues(t *testing.T) {
	p, b := bareReplicaPolicy()
	p.Spec.MatchConstraints.ResourceRules[0].Operations = nil
	p.Spec.Validations[0].Message = "two\nlines"
	b.Spec.ValidationActions = append(b.Spec.ValidationActions, admissionregistrationv1.Warn)
	b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "limits"}
	ev, err := policy.Compile([]*admissionregistrationv1.ValidatingAdmissionPolicy{p}, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{b}, policy.Options{})
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	var got []string
	for _, e := range ev.Issues() {
		got = append(got, e.Error())
	}
	want := []string{
		`validatingAdmissionPolicy[max-replicas].spec.matchConstraints.resourceRules[0].operations: Required value`,
		`validatingAdmissionPolicy[max-replicas].spec.validations[0].message: Invalid value: "two\nlines": must not contain line breaks`,
		`validatingAdmissionPolicyBinding[max-replicas].spec.paramRef.parameterNotFoundAction: Required value`,
		`validatingAdmissionPolicyBinding[max-replicas].spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn`,
		`options.namespaces: Required value: Options.Namespaces is nil`,
	}
	if len(got) != len(want) {
		t.Fatalf("Issues() = %q, want %d issues starting with %q", got, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("Issues()[%d] = %q, want it to start with %q", i, got[i], want[i])
		}
	}
}

// decisionView is what a caller sees of a decision, with errors as text.
type decisionView struct {
	Allowed          bool
	Status           *metav1.Status
	Warnings         []string
	AuditAnnotations map[string]string
	Trace            []string
}

func project(d *policy.Decision) decisionView {
	v := decisionView{Allowed: d.Allowed, Status: d.Status, Warnings: d.Warnings, AuditAnnotations: d.AuditAnnotations}
	for _, tr := range d.Trace {
		s := fmt.Sprintf("%s/%s %v", tr.Policy, tr.Binding, tr.Outcome)
		if tr.Err != nil {
			s += ": " + tr.Err.Error()
		}
		v.Trace = append(v.Trace, s)
	}
	return v
}

// TestNilNamespaces checks that without a namespace getter a namespaced
// request is denied with the API server's exact 404, while the trace and
// Issues say how to provide the namespaces.
func TestNilNamespaces(t *testing.T) {
	p, b := bareReplicaPolicy()
	ev, err := policy.Compile([]*admissionregistrationv1.ValidatingAdmissionPolicy{p}, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{b}, policy.Options{})
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "prod"},
		"spec":     map[string]any{"replicas": int64(1)},
	}}
	d, err := ev.Evaluate(t.Context(), bareRequest(admissionv1.Create, obj, nil))
	if err != nil {
		t.Fatalf("Evaluate() error = %v", err)
	}
	want := &metav1.Status{Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
		Message: `namespaces "prod" not found`, Details: &metav1.StatusDetails{Name: "prod", Kind: "namespaces"}}
	if d.Allowed || !cmp.Equal(d.Status, want) {
		t.Errorf("Evaluate() = allowed %t, status %v; want denied with %v", d.Allowed, d.Status, want)
	}
	var traced bool
	for _, tr := range d.Trace {
		traced = traced || (tr.Err != nil && strings.Contains(tr.Err.Error(), `namespaces "prod" not found (Options.Namespaces is nil`))
	}
	if !traced {
		t.Errorf("Trace = %v, want an entry naming the namespace and Options.Namespaces", d.Trace)
	}
	if iss := ev.Issues(); len(iss) != 1 || iss[0].Field != "options.namespaces" {
		t.Errorf("Issues() = %v, want one issue at options.namespaces", iss)
	}
}
