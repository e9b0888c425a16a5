package policy_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

const teamLabelPolicies = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: require-team}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"], scope: Cluster}
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: "every Deployment needs a team label"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: require-team-binding}
spec:
  policyName: require-team
  validationActions: [Deny]
`

const defaultTeam = `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: default-team}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"], scope: Cluster}
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: >
        Object{metadata: Object.metadata{labels: {"team": "platform"}}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: default-team-binding}
spec:
  policyName: default-team
`

// A MutatingAdmissionPolicy adds a default label before the validating
// policy that requires it runs, as the API server's admission chain does.
// The decision carries the mutated object and the JSON patch to it.
func Example_mutateThenValidate() {
	m, err := manifest.Load([]byte(teamLabelPolicies), "policies.yaml")
	if err != nil {
		log.Fatal(err)
	}
	mut, err := manifest.Load([]byte(defaultTeam), "mutating.yaml")
	if err != nil {
		log.Fatal(err)
	}
	for _, mutating := range []bool{false, true} {
		opts := policy.Options{}
		if mutating {
			opts.MutatingPolicies, opts.MutatingBindings = mut.MutatingPolicies, mut.MutatingBindings
		}
		ev, err := policy.Compile(m.Policies, m.Bindings, opts)
		if err != nil {
			log.Fatal(err)
		}
		d, err := ev.Evaluate(context.Background(), deployment("web", 2))
		if err != nil {
			log.Fatal(err)
		}
		if !d.Allowed {
			fmt.Println("denied:", d.Status.Message)
			continue
		}
		fmt.Printf("allowed; patch: %s\n", d.Patch)
	}
	// Output:
	// denied: deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'require-team' with binding 'require-team-binding' denied request: every Deployment needs a team label
	// allowed; patch: [{"op":"add","path":"/metadata/labels","value":{"team":"platform"}}]
}
