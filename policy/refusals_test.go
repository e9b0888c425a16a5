package policy_test

import (
	"testing"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// TestRefusalsNamespaceDropped: the API server drops the namespace of a
// cluster-scoped object before validating it, so a policy or binding that
// names one is created, not refused.
func TestRefusalsNamespaceDropped(t *testing.T) {
	m, err := manifest.Load([]byte(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p, namespace: default}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  validations:
  - expression: "true"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: p, namespace: default}
spec:
  policyName: p
  validationActions: [Deny]
`), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if rs := policy.Refusals(nil, m); len(rs) != 0 {
		t.Errorf("Refusals() = %v, want none", rs)
	}
	if m.Policies[0].Namespace != "default" || m.Bindings[0].Namespace != "default" {
		t.Error("Refusals modified its input")
	}
}

// TestRefusalsMutating: MutatingAdmissionPolicies and their bindings are
// refused as the API server refuses them at creation (here a mutation
// that does not compile), and a binding of a missing policy is named.
func TestRefusalsMutating(t *testing.T) {
	m, err := manifest.Load([]byte(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: m}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.spec{x: nope}}"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: m}
spec: {policyName: m}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: orphan}
spec: {policyName: missing}
`), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rs := policy.Refusals(nil, m)
	var got []string
	for _, r := range rs {
		got = append(got, r.Kind+" "+r.Name+": "+r.Err.Field)
	}
	want := []string{
		"MutatingAdmissionPolicy m: spec.mutations[0].applyConfiguration.expression",
		"MutatingAdmissionPolicyBinding orphan: spec.policyName",
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Refusals() = %q, want %q\n%v", got, want, rs)
	}
}
