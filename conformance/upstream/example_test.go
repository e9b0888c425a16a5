package upstream_test

import (
	"context"
	"fmt"

	"github.com/vapkit/vapkit/conformance/upstream"
)

const exampleCase = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  validations:
  - expression: "object.spec.replicas <= 3"
    message: "at most 3 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-binding}
spec:
  policyName: max-replicas
  validationActions: [Deny, Warn]
---
apiVersion: v1
kind: Namespace
metadata: {name: default}
---
apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: 00000000-0000-0000-0000-000000000001
  kind: {group: apps, version: v1, kind: Deployment}
  resource: {group: apps, version: v1, resource: deployments}
  name: web
  namespace: default
  operation: CREATE
  userInfo: {username: alice}
  object:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec: {replicas: 5}
`

func ExampleRun() {
	c, err := upstream.ParseCase([]byte(exampleCase), "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := upstream.Run(context.Background(), c, upstream.Ordering{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Allowed, resp.Result.Code, resp.Result.Reason)
	fmt.Println(resp.Result.Message)
	fmt.Println(resp.Warnings)
	// Output:
	// false 422 Invalid
	// deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: at most 3 replicas
	// [Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding': at most 3 replicas]
}
