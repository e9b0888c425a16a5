package manifest_test

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/policy/manifest"
)

func Example() {
	const input = `# A policy written in v1beta1, read back as defaulted v1.
apiVersion: admissionregistration.k8s.io/v1beta1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits}
data: {max: "5"}
`
	docs, err := manifest.Decode([]byte(input), "example.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			fmt.Printf("document %d, line %d: %s %s failurePolicy=%s matchPolicy=%s scope=%s\n",
				d.Index, d.Line, o.APIVersion, o.Name, *o.Spec.FailurePolicy,
				*o.Spec.MatchConstraints.MatchPolicy, *o.Spec.MatchConstraints.ResourceRules[0].Scope)
		case *unstructured.Unstructured:
			fmt.Printf("document %d, line %d: %s %s\n", d.Index, d.Line, o.GetKind(), o.GetName())
		}
	}

	_, err = manifest.Decode([]byte(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: typo}
spec:
  validations:
  - expresion: "true"
`), "broken.yaml")
	fmt.Println(err)
	// Output:
	// document 1, line 2: admissionregistration.k8s.io/v1 max-replicas failurePolicy=Fail matchPolicy=Equivalent scope=*
	// document 2, line 12: ConfigMap limits
	// broken.yaml:6: document 1 (ValidatingAdmissionPolicy/typo): unknown field "spec.validations[0].expresion"
}

func ExampleLoad() {
	const input = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}
  validations:
  - expression: "object.spec.replicas <= int(params.data.max)"
---
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  paramRef: {name: limits, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: default}
data: {max: "5"}
`
	m, err := manifest.Load([]byte(input), "cluster.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("policies:", len(m.Policies), m.Policies[0].Name)
	b := m.Bindings[0]
	fmt.Println("binding:", b.APIVersion, b.Name, "parameterNotFoundAction:", *b.Spec.ParamRef.ParameterNotFoundAction)
	for _, o := range m.Objects {
		u := o.(*unstructured.Unstructured)
		fmt.Println("object:", u.GetKind(), u.GetNamespace()+"/"+u.GetName())
	}
	// Output:
	// policies: 1 max-replicas
	// binding: admissionregistration.k8s.io/v1 max-replicas parameterNotFoundAction: Deny
	// object: ConfigMap default/limits
}

func ExampleNewResourceMapper() {
	m, err := manifest.Load([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget}
  versions:
  - {name: v1, served: true, storage: true, subresources: {status: {}}}
  - {name: v2, served: true, storage: false}
`), "crd.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	mapper, err := manifest.NewResourceMapper(m.CRDs...)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The evaluator's questions: resources of kinds, and equivalents.
	gvr, namespaced, _ := mapper.ResourceFor(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	fmt.Println(gvr, namespaced)
	fmt.Println(mapper.EquivalentResourcesFor(schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}, ""))
	fmt.Println(mapper.KindFor(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "scale"))
	// The type checker's question: the kinds a resource rule names.
	kinds, _ := mapper.KindsFor(schema.GroupVersionResource{Group: "example.com", Resource: "widget"})
	fmt.Println(kinds)
	// Output:
	// apps/v1, Resource=deployments true
	// [example.com/v1, Resource=widgets example.com/v2, Resource=widgets]
	// autoscaling/v1, Kind=Scale
	// [example.com/v1, Kind=Widget example.com/v2, Kind=Widget]
}
