package manifest_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/vapkit/vapkit/policy/manifest"
)

// fullMAP sets every field of a MutatingAdmissionPolicy and its binding, so
// that a field lost in conversion shows as a difference.
const fullMAP = `
apiVersion: admissionregistration.k8s.io/VERSION
kind: MutatingAdmissionPolicy
metadata: {name: p, labels: {a: b}}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    namespaceSelector: {matchLabels: {env: prod}}
    objectSelector: {matchExpressions: [{key: app, operator: Exists}]}
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"], resourceNames: ["web"], scope: Namespaced}
    excludeResourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["pods"]}
    matchPolicy: Exact
  variables:
  - {name: v, expression: "1"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{}"}
  - patchType: JSONPatch
    jsonPatch: {expression: "[]"}
  failurePolicy: Ignore
  matchConditions:
  - {name: c, expression: "true"}
  reinvocationPolicy: IfNeeded
---
apiVersion: admissionregistration.k8s.io/VERSION
kind: MutatingAdmissionPolicyBinding
metadata: {name: b}
spec:
  policyName: p
  paramRef: {name: param, namespace: ns, selector: {matchLabels: {k: v}}, parameterNotFoundAction: Allow}
  matchResources:
    namespaceSelector: {}
    objectSelector: {}
    matchPolicy: Equivalent
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["*"], resources: ["deployments"], scope: "*"}
`

// TestMutatingVersions: the three versions load into the same v1 objects.
func TestMutatingVersions(t *testing.T) {
	load := func(version string) *manifest.Set {
		t.Helper()
		s, err := manifest.Load([]byte(strings.ReplaceAll(fullMAP, "VERSION", version)), version+".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if len(s.MutatingPolicies) != 1 || len(s.MutatingBindings) != 1 || len(s.Objects) != 0 {
			t.Fatalf("%s: %d policies, %d bindings, %d other objects", version, len(s.MutatingPolicies), len(s.MutatingBindings), len(s.Objects))
		}
		return s
	}
	v1 := load("v1")
	if v1.MutatingPolicies[0].APIVersion != "admissionregistration.k8s.io/v1" || v1.MutatingPolicies[0].Spec.Variables[0].Name != "v" {
		t.Fatalf("v1 policy = %+v", v1.MutatingPolicies[0])
	}
	for _, version := range []string{"v1beta1", "v1alpha1"} {
		got := load(version)
		if diff := cmp.Diff(v1.MutatingPolicies, got.MutatingPolicies); diff != "" {
			t.Errorf("%s policy (-v1 +%s):\n%s", version, version, diff)
		}
		if diff := cmp.Diff(v1.MutatingBindings, got.MutatingBindings); diff != "" {
			t.Errorf("%s binding (-v1 +%s):\n%s", version, version, diff)
		}
	}
}

func TestMutatingDefaults(t *testing.T) {
	const y = `
apiVersion: admissionregistration.k8s.io/VERSION
kind: MutatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}]
  mutations: [{patchType: JSONPatch, jsonPatch: {expression: "[]"}}]
---
apiVersion: admissionregistration.k8s.io/VERSION
kind: MutatingAdmissionPolicyBinding
metadata: {name: b}
spec:
  policyName: p
  paramRef: {name: param}
`
	for _, tc := range []struct {
		version string
		action  *admissionregistrationv1.ParameterNotFoundActionType
	}{{"v1", nil}, {"v1beta1", nil}, {"v1alpha1", ptr.To(admissionregistrationv1.DenyAction)}} {
		s, err := manifest.Load([]byte(strings.ReplaceAll(y, "VERSION", tc.version)), "d.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p, b := s.MutatingPolicies[0], s.MutatingBindings[0]
		mc := p.Spec.MatchConstraints
		if *p.Spec.FailurePolicy != admissionregistrationv1.Fail || *mc.MatchPolicy != admissionregistrationv1.Equivalent ||
			mc.NamespaceSelector == nil || mc.ObjectSelector == nil || *mc.ResourceRules[0].Scope != admissionregistrationv1.AllScopes {
			t.Errorf("%s: policy defaults = %+v", tc.version, p.Spec)
		}
		if p.Spec.ReinvocationPolicy != "" {
			t.Errorf("%s: reinvocationPolicy defaulted to %q; the API server leaves it empty", tc.version, p.Spec.ReinvocationPolicy)
		}
		if diff := cmp.Diff(tc.action, b.Spec.ParamRef.ParameterNotFoundAction); diff != "" {
			t.Errorf("%s: parameterNotFoundAction (-want +got):\n%s", tc.version, diff)
		}
	}
}

func TestMutatingStrict(t *testing.T) {
	_, err := manifest.Load([]byte(`
apiVersion: admissionregistration.k8s.io/v1beta1
kind: MutatingAdmissionPolicy
metadata: {name: p}
spec:
  mutationz: []
`), "bad.yaml")
	if err == nil || !strings.Contains(err.Error(), "mutationz") {
		t.Fatalf("Load() error = %v, want the unknown field named", err)
	}
}
