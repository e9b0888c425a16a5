package policy_test

import (
	"context"
	"fmt"
	"log"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

const replicaPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"], scope: Cluster}
  validations:
  - expression: "object.spec.replicas <= 5"
    messageExpression: "'replicas must be at most 5, got ' + string(object.spec.replicas)"
    reason: Forbidden
  auditAnnotations:
  - key: replicas
    valueExpression: "string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas-binding}
spec:
  policyName: max-replicas
  validationActions: [Deny]
`

func deployment(name string, replicas int64) *policy.Request {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"replicas": replicas},
	}}
	return &policy.Request{
		Operation: admissionv1.Create,
		Kind:      schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      name,
		Object:    obj,
	}
}

// Compile once, then evaluate as many requests as needed.
func Example() {
	m, err := manifest.Load([]byte(replicaPolicy), "policy.yaml")
	if err != nil {
		log.Fatal(err)
	}
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, req := range []*policy.Request{deployment("small", 2), deployment("big", 9)} {
		d, err := ev.Evaluate(context.Background(), req)
		if err != nil {
			log.Fatal(err)
		}
		if d.Allowed {
			fmt.Printf("%s: allowed, audit %v\n", req.Name, d.AuditAnnotations)
			continue
		}
		fmt.Printf("%s: denied %d %s: %s\n", req.Name, d.Status.Code, d.Status.Reason, d.Status.Message)
	}
	// Output:
	// small: allowed, audit map[max-replicas/replicas:2]
	// big: denied 403 Forbidden: deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be at most 5, got 9
}

// A binding with the Warn and Audit actions reports failures without
// denying.
func Example_warnAndAudit() {
	m, err := manifest.Load([]byte(replicaPolicy), "policy.yaml")
	if err != nil {
		log.Fatal(err)
	}
	m.Bindings[0].Spec.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{})
	if err != nil {
		log.Fatal(err)
	}
	d, err := ev.Evaluate(context.Background(), deployment("big", 9))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("allowed:", d.Allowed)
	for _, w := range d.Warnings {
		fmt.Println("warning:", w)
	}
	fmt.Println("audit:", d.AuditAnnotations["validation.policy.admission.k8s.io/validation_failure"])
	// Output:
	// allowed: true
	// warning: Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding': replicas must be at most 5, got 9
	// audit: [{"message":"replicas must be at most 5, got 9","policy":"max-replicas","binding":"max-replicas-binding","expressionIndex":0,"validationActions":["Warn","Audit"]}]
}
