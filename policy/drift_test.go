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

const inMissingNamespace = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: any}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  validations:
  - expression: "true"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: any-binding}
spec:
  policyName: any
  validationActions: [Deny]
`

// TestDriftNamespaceNotFound: up to 1.31 a missing namespace was reported
// by the informer's lister (singular resource name), from 1.32 by a GET.
func TestDriftNamespaceNotFound(t *testing.T) {
	m, err := manifest.Load([]byte(inMissingNamespace), "policy.yaml")
	if err != nil {
		t.Fatalf("manifest.Load() = %v", err)
	}
	for _, tc := range []struct {
		version celenv.Version
		want    string
	}{
		{celenv.Version1_30, `namespace "ghost" not found`},
		{celenv.Version1_31, `namespace "ghost" not found`},
		{celenv.Version1_32, `namespaces "ghost" not found`},
		{celenv.Version1_37, `namespaces "ghost" not found`},
	} {
		env, err := celenv.New(celenv.Options{Version: tc.version})
		if err != nil {
			t.Fatalf("celenv.New() = %v", err)
		}
		ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{Env: env})
		if err != nil {
			t.Fatalf("Compile() = %v", err)
		}
		req := deployment("web", 1)
		req.Namespace = "ghost"
		d, err := ev.Evaluate(t.Context(), req)
		if err != nil {
			t.Fatalf("Evaluate() = %v", err)
		}
		if d.Allowed || d.Status == nil || d.Status.Code != 404 || d.Status.Message != tc.want {
			t.Errorf("%v: Evaluate() = allowed %v, status %+v; want 404 %q", tc.version, d.Allowed, d.Status, tc.want)
		}
	}
}
