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
