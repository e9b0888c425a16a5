package reviewcmd

import (
	"bytes"
	"encoding/json"
	"testing"
)

// defaultedPolicies deny what the API server's defaulting always fills in
// before admission: a Pod's containers without imagePullPolicy, and a
// Gadget without the mode its CRD's schema defaults.
const defaultedPolicies = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              mode: {type: string, default: fast}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: defaulted}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
    - {apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [gadgets]}
  validations:
  - expression: "object.kind != 'Pod' || object.spec.containers.all(c, has(c.imagePullPolicy) && c.imagePullPolicy == 'Always')"
    message: "pull policy missing"
  - expression: "object.kind != 'Gadget' || (has(object.spec.mode) && !has(object.spec.extra))"
    message: "mode missing"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: defaulted}
spec:
  policyName: defaulted
  validationActions: [Deny]
`

// TestSuiteObjectsDefaulted: a suite's objects reach the policies as the
// API server decodes them, so a test of what the server always fills in
// passes as it does in a cluster: built-in defaults (an untagged image's
// pull policy is Always) and a CRD schema's defaults and pruning.
func TestSuiteObjectsDefaulted(t *testing.T) {
	t.Parallel()
	tests := `tests:
- name: pod
  object: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: nginx}]}}
  expect: {allow: true}
- name: gadget
  object: {apiVersion: example.com/v1, kind: Gadget, metadata: {name: g}, spec: {extra: 1}}
  expect: {allow: true}
`
	dir := writeDir(t, map[string]string{
		"suite.yaml":  suiteHead + "policies: [policy.yaml]\n" + tests,
		"policy.yaml": defaultedPolicies,
	})
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-format", "json", dir}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	var rep report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary != (summary{Total: 2, Passed: 2}) {
		t.Errorf("summary = %+v, want 2 passed\n%s", rep.Summary, out.String())
	}
}
