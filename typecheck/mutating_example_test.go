package typecheck_test

import (
	"fmt"
	"log"

	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// The API server refuses a MutatingAdmissionPolicy that matches DELETE or
// whose apply configuration is not an Object; ValidateMutatingPolicy says so
// with the server's paths and messages.
func ExampleValidateMutatingPolicy() {
	s, err := manifest.Load([]byte(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: add-label}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "DELETE"], resources: ["configmaps"]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "object.metadata"
`), "map.yaml")
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range typecheck.ValidateMutatingPolicy(nil, s.MutatingPolicies[0]) {
		fmt.Println(e)
	}
	// Output:
	// spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"
	// spec.mutations[0].applyConfiguration.expression: Invalid value: "object.metadata": must evaluate to Object but got dyn
}
