package policy_test

import (
	"context"
	"encoding/json"
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
		// One operation a line. Besides the label, the patch adds the
		// defaults kube-apiserver 1.37 gives a Deployment after a mutation:
		// this request's object was written without them (the API server
		// would have defaulted it on decoding already).
		var ops []json.RawMessage
		if err := json.Unmarshal(d.Patch, &ops); err != nil {
			log.Fatal(err)
		}
		fmt.Println("allowed; patch:")
		for _, op := range ops {
			fmt.Println(string(op))
		}
	}
	// Output:
	// denied: deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'require-team' with binding 'require-team-binding' denied request: every Deployment needs a team label
	// allowed; patch:
	// {"op":"add","path":"/metadata/labels","value":{"team":"platform"}}
	// {"op":"add","path":"/spec/progressDeadlineSeconds","value":600}
	// {"op":"add","path":"/spec/revisionHistoryLimit","value":10}
	// {"op":"add","path":"/spec/strategy/rollingUpdate","value":{"maxSurge":"25%","maxUnavailable":"25%"}}
	// {"op":"add","path":"/spec/strategy/type","value":"RollingUpdate"}
	// {"op":"add","path":"/spec/template/spec/dnsPolicy","value":"ClusterFirst"}
	// {"op":"add","path":"/spec/template/spec/restartPolicy","value":"Always"}
	// {"op":"add","path":"/spec/template/spec/schedulerName","value":"default-scheduler"}
	// {"op":"add","path":"/spec/template/spec/securityContext","value":{}}
	// {"op":"add","path":"/spec/template/spec/terminationGracePeriodSeconds","value":30}
}
