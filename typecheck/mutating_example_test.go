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

// The API server type-checks no MutatingAdmissionPolicy against schemas;
// CheckMutating is vapkit's own check: CEL's, plus the fields and literal
// values of Object{...} constructions against the kind's schema.
func ExampleChecker_CheckMutating() {
	s, err := manifest.Load([]byte(`
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: scale}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  matchConditions:
  - {name: small, expression: "object.spec.replica < 2"}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: "Object{spec: Object.spec{replicas: '2'}}"
`), "map.yaml")
	if err != nil {
		log.Fatal(err)
	}
	checker, err := typecheck.NewChecker(typecheck.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, w := range checker.CheckMutating(s.MutatingPolicies[0]) {
		fmt.Printf("%s:\n%s", w.FieldRef, w.Warning)
	}
	// Output:
	// spec.matchConditions[0].expression:
	// apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replica'
	//  | object.spec.replica < 2
	//  | ...........^
	// spec.mutations[0].applyConfiguration.expression:
	// apps/v1, Kind=Deployment: ERROR: <input>:1:36: field "replicas" of Object.spec is an integer in the schema, got string
	//  | Object{spec: Object.spec{replicas: '2'}}
	//  | ...................................^
}
