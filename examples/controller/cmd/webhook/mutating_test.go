package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
)

const replicasMAP = `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: cap-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  reinvocationPolicy: Never
  mutations:
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "replace", path: "/spec/replicas", value: 3}]'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: cap-replicas}
spec: {policyName: cap-replicas}
`

// TestMutatingPolicies: the webhook answers a MutatingAdmissionPolicy's
// change with a JSON patch, and the validating policies see the patched
// object; a dry run applies no mutation.
func TestMutatingPolicies(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "namespaces.json"), []byte(defaultNamespace), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mutating.yaml"), []byte(replicasMAP), 0o600); err != nil {
		t.Fatal(err)
	}
	writePolicy(t, dir, "3", time.Now())
	pt := admissionv1.PatchTypeJSONPatch
	resp := start(t, dir, false).validate(t, deploymentReview("m", 5))
	want := &admissionv1.AdmissionResponse{UID: "uid-m", Allowed: true, PatchType: &pt,
		Patch: []byte(`[{"op":"replace","path":"/spec/replicas","value":3}]`)}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	resp = start(t, dir, true).validate(t, deploymentReview("d", 5))
	if resp.Patch != nil || len(resp.Warnings) != 1 {
		t.Errorf("dry-run response = %+v, want a warning and no patch", resp)
	}
}
