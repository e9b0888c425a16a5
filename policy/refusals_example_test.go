package policy_test

import (
	"fmt"
	"log"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Refusals tells what the API server would not let a cluster hold, so that a
// test does not pass on policies that could never be created.
func ExampleRefusals() {
	m, err := manifest.Load([]byte(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= "
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas}
spec:
  policyName: replica
  validationActions: [Deny]
`), "policies.yaml")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range policy.Refusals(nil, m) {
		fmt.Printf("%s %s: %s: %s\n", r.Kind, r.Name, r.Err.Field, r.Err.Type)
	}
	// Output:
	// ValidatingAdmissionPolicy replicas: spec.validations[0].expression: Invalid value
	// ValidatingAdmissionPolicyBinding replicas: spec.policyName: Not found
}
