package manifest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vapkit/vapkit/policy/manifest"
)

// TestConvertSeeds rewrites the policies and bindings of the seed cases to
// v1beta1 and v1alpha1 and checks that they decode to the same v1 objects.
func TestConvertSeeds(t *testing.T) {
	t.Parallel()
	seeds, err := filepath.Glob(filepath.Join(casesDir, "seed-*.yaml"))
	if err != nil || len(seeds) == 0 {
		t.Fatalf("no seed cases in %s: %v", casesDir, err)
	}
	for _, file := range seeds {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := manifest.Decode(data, file)
		if err != nil {
			t.Fatalf("Decode(%s) error = %v", file, err)
		}
		for _, version := range []string{"v1beta1", "v1alpha1"} {
			t.Run(filepath.Base(file)+"/"+version, func(t *testing.T) {
				t.Parallel()
				in := bytes.ReplaceAll(data,
					[]byte("apiVersion: admissionregistration.k8s.io/v1\n"),
					[]byte("apiVersion: admissionregistration.k8s.io/"+version+"\n"))
				got, err := manifest.Decode(in, file)
				if err != nil {
					t.Fatalf("Decode() error = %v", err)
				}
				if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(manifest.Document{})); diff != "" {
					t.Errorf("Decode() as %s mismatch (-v1 +%s):\n%s", version, version, diff)
				}
			})
		}
	}
}

func TestConvertVersions(t *testing.T) {
	t.Parallel()
	const policy = `kind: ValidatingAdmissionPolicy
metadata: {name: p, labels: {a: b}}
spec:
  failurePolicy: Ignore
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    matchPolicy: Exact
    namespaceSelector: {matchLabels: {env: test}}
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments], resourceNames: [web], scope: Namespaced}
    excludeResourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: ["*"], resources: [pods]}
  matchConditions: [{name: m, expression: "true"}]
  variables: [{name: v, expression: "1"}]
  validations: [{expression: "true", message: m, messageExpression: "'m'", reason: Forbidden}]
  auditAnnotations: [{key: k, valueExpression: "'v'"}]
status:
  observedGeneration: 2
  typeChecking: {expressionWarnings: [{fieldRef: "spec.validations[0].expression", warning: w}]}
`
	const binding = `kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
spec:
  policyName: p
  validationActions: [Warn, Audit]
  paramRef: {selector: {matchLabels: {a: b}}, namespace: ns}
  matchResources:
    objectSelector: {matchLabels: {x: "y"}}
`
	wantPolicy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			ParamKind:     &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &admissionregistrationv1.MatchResources{
				MatchPolicy:       ptr.To(admissionregistrationv1.Exact),
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "test"}},
				ObjectSelector:    &metav1.LabelSelector{},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					ResourceNames: []string{"web"},
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
							Scope: ptr.To(admissionregistrationv1.NamespacedScope),
						},
					},
				}},
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
							Scope: ptr.To(admissionregistrationv1.AllScopes),
						},
					},
				}},
			},
			MatchConditions:  []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "true"}},
			Variables:        []admissionregistrationv1.Variable{{Name: "v", Expression: "1"}},
			Validations:      []admissionregistrationv1.Validation{{Expression: "true", Message: "m", MessageExpression: "'m'", Reason: ptr.To(metav1.StatusReasonForbidden)}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "k", ValueExpression: "'v'"}},
		},
		Status: admissionregistrationv1.ValidatingAdmissionPolicyStatus{
			ObservedGeneration: 2,
			TypeChecking: &admissionregistrationv1.TypeChecking{ExpressionWarnings: []admissionregistrationv1.ExpressionWarning{
				{FieldRef: "spec.validations[0].expression", Warning: "w"},
			}},
		},
	}
	wantBinding := func(notFound *admissionregistrationv1.ParameterNotFoundActionType) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        "p",
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit},
				ParamRef: &admissionregistrationv1.ParamRef{
					Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
					Namespace:               "ns",
					ParameterNotFoundAction: notFound,
				},
				MatchResources: &admissionregistrationv1.MatchResources{
					MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
					NamespaceSelector: &metav1.LabelSelector{},
					ObjectSelector:    &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}},
				},
			},
		}
	}
	tests := []struct {
		version      string
		wantNotFound *admissionregistrationv1.ParameterNotFoundActionType
	}{
		{"v1", nil},
		{"v1beta1", nil},
		// Only v1alpha1 defaults parameterNotFoundAction (to Deny).
		{"v1alpha1", ptr.To(admissionregistrationv1.DenyAction)},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			av := "apiVersion: admissionregistration.k8s.io/" + tc.version + "\n"
			docs, err := manifest.Decode([]byte(av+policy+"---\n"+av+binding), "")
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if diff := cmp.Diff(wantPolicy, docs[0].Object); diff != "" {
				t.Errorf("Decode() policy mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantBinding(tc.wantNotFound), docs[1].Object); diff != "" {
				t.Errorf("Decode() binding mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetPolicyDefaults(t *testing.T) {
	t.Parallel()
	fullMatch := func() *admissionregistrationv1.MatchResources {
		return &admissionregistrationv1.MatchResources{
			MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{},
			ObjectSelector:    &metav1.LabelSelector{},
			ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{Scope: ptr.To(admissionregistrationv1.AllScopes)}},
			}},
			ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{Scope: ptr.To(admissionregistrationv1.AllScopes)}},
			}},
		}
	}
	tests := []struct {
		name string
		in   *admissionregistrationv1.ValidatingAdmissionPolicy
		want *admissionregistrationv1.ValidatingAdmissionPolicy
	}{{
		name: "nil",
	}, {
		name: "empty spec gets only failurePolicy",
		in:   &admissionregistrationv1.ValidatingAdmissionPolicy{},
		want: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
		}},
	}, {
		name: "matchConstraints and rules",
		in: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules:        []admissionregistrationv1.NamedRuleWithOperations{{}},
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{}},
			},
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: fullMatch(),
		}},
	}, {
		name: "set values are kept",
		in: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				MatchPolicy:       ptr.To(admissionregistrationv1.Exact),
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			},
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				MatchPolicy:       ptr.To(admissionregistrationv1.Exact),
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
				ObjectSelector:    &metav1.LabelSelector{},
			},
		}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			manifest.SetPolicyDefaults(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("SetPolicyDefaults() mismatch (-want +got):\n%s", diff)
			}
			again := tc.in.DeepCopy()
			manifest.SetPolicyDefaults(again)
			if diff := cmp.Diff(tc.in, again); diff != "" {
				t.Errorf("SetPolicyDefaults() not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestSetBindingDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   *admissionregistrationv1.ValidatingAdmissionPolicyBinding
		want *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	}{{
		name: "nil",
	}, {
		name: "nil matchResources and paramRef action stay nil",
		in: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			ParamRef: &admissionregistrationv1.ParamRef{Name: "x"},
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			ParamRef: &admissionregistrationv1.ParamRef{Name: "x"},
		}},
	}, {
		name: "empty matchResources",
		in: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			MatchResources: &admissionregistrationv1.MatchResources{},
		}},
		want: &admissionregistrationv1.ValidatingAdmissionPolicyBinding{Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			MatchResources: &admissionregistrationv1.MatchResources{
				MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
			},
		}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			manifest.SetBindingDefaults(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("SetBindingDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
