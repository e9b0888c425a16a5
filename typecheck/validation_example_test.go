package typecheck_test

import (
	"fmt"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

const manifests = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas.example.com
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  variables:
  - name: tooMany
    expression: object.spec.replicas > 5
  validations:
  - expression: "!variables.tooMany"
    messageExpression: "'too many: ' + variables.tooMany"
    reason: Unauthorized
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replicas-binding
spec:
  policyName: replicas.example.com
  validationActions: [Deny, Warn]
`

// ExampleValidatePolicy reports what the API server would say when these
// manifests are applied.
func ExampleValidatePolicy() {
	env, err := celenv.New(celenv.Options{Version: celenv.Version1_37})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := manifest.Load([]byte(manifests), "replicas.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range m.Policies {
		for _, e := range typecheck.ValidatePolicy(env, p) {
			fmt.Println(e)
		}
	}
	for _, b := range m.Bindings {
		for _, e := range typecheck.ValidateBinding(b) {
			fmt.Println(e)
		}
	}
	// Output:
	// spec.validations[0].messageExpression: Invalid value: "'too many: ' + variables.tooMany": compilation failed: ERROR: <input>:1:14: found no matching overload for '_+_' applied to '(string, bool)'
	//  | 'too many: ' + variables.tooMany
	//  | .............^
	// spec.validations[0].reason: Unsupported value: "Unauthorized": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"
	// spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)
}
