package casefile_test

import (
	"context"
	"fmt"

	"github.com/vapkit/vapkit/policy/casefile"
)

func Example() {
	c, err := casefile.Parse([]byte(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - {expression: "object.spec.replicas <= 5", message: "at most 5 replicas"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec: {policyName: max-replicas, validationActions: [Deny]}
---
apiVersion: v1
kind: Namespace
metadata: {name: prod, labels: {kubernetes.io/metadata.name: prod}}
---
apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: u1
  kind: {group: apps, version: v1, kind: Deployment}
  resource: {group: apps, version: v1, resource: deployments}
  name: web
  namespace: prod
  operation: CREATE
  userInfo: {username: alice}
  object:
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: prod}
    spec: {replicas: 7}
`), "max-replicas.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Review(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(casefile.Project(resp))
	// Output:
	// {
	//   "allowed": false,
	//   "code": 422,
	//   "reason": "Invalid",
	//   "message": "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: at most 5 replicas"
	// }
}
