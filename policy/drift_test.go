package policy_test

import (
	"testing"

	"github.com/vapkit/vapkit/audit"
	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

const twoAuditFailures = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: two-failures}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"], scope: Cluster}
  validations:
  - expression: "object.spec.replicas <= 5"
    message: first
  - expression: "object.spec.replicas <= 3"
    message: second
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: audit-only}
spec:
  policyName: two-failures
  validationActions: [Audit]
`

// TestDriftValidationFailures: up to 1.36 the API server kept only the
// first failure under validation_failure; 1.37 records every failure.
func TestDriftValidationFailures(t *testing.T) {
	m, err := manifest.Load([]byte(twoAuditFailures), "policy.yaml")
	if err != nil {
		t.Fatalf("manifest.Load() = %v", err)
	}
	first := `{"message":"first","policy":"two-failures","binding":"audit-only","expressionIndex":0,"validationActions":["Audit"]}`
	second := `{"message":"second","policy":"two-failures","binding":"audit-only","expressionIndex":1,"validationActions":["Audit"]}`
	tests := []struct {
		version celenv.Version
		want    string
	}{
		{version: celenv.Version1_30, want: "[" + first + "]"},
		{version: celenv.Version1_36, want: "[" + first + "]"},
		{version: celenv.Version1_37, want: "[" + first + "," + second + "]"},
	}
	for _, tc := range tests {
		t.Run(tc.version.String(), func(t *testing.T) {
			env, err := celenv.New(celenv.Options{Version: tc.version})
			if err != nil {
				t.Fatalf("celenv.New() = %v", err)
			}
			ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{Env: env})
			if err != nil {
				t.Fatalf("Compile() = %v", err)
			}
			d, err := ev.Evaluate(t.Context(), deployment("big", 9))
			if err != nil {
				t.Fatalf("Evaluate() = %v", err)
			}
			if !d.Allowed {
				t.Errorf("Evaluate() denied: %v", d.Status)
			}
			if got := d.AuditAnnotations[audit.ValidationFailureKey]; got != tc.want {
				t.Errorf("%s = %s, want %s", audit.ValidationFailureKey, got, tc.want)
			}
		})
	}
}
