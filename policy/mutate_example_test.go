package policy_test

import (
	"context"
	"fmt"
	"log"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

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
`

// A MutatingAdmissionPolicy adds a default label before the validating
// policy that requires it runs, as the API server's admission chain does.
// The decision carries the mutated object and the JSON patch to it.
func Example_mutateThenValidate() {
	m, err := manifest.Load([]byte(teamLabelPolicies), "policies.yaml")
	if err != nil {
		log.Fatal(err)
	}
	var mp admissionregistrationv1.MutatingAdmissionPolicy
	if err := yaml.UnmarshalStrict([]byte(defaultTeam), &mp); err != nil {
		log.Fatal(err)
	}
	mb := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	mb.Name, mb.Spec.PolicyName = "default-team-binding", mp.Name
	for _, mutating := range []bool{false, true} {
		opts := policy.Options{}
		if mutating {
			opts.MutatingPolicies = []*admissionregistrationv1.MutatingAdmissionPolicy{&mp}
			opts.MutatingBindings = []*admissionregistrationv1.MutatingAdmissionPolicyBinding{mb}
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
