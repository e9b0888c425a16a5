package typecheck_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// ExampleCustomResourceValidator reports what the API server answers (422
// Invalid) when a custom resource does not fit its CRD's schema.
func ExampleCustomResourceValidator() {
	m, err := manifest.Load([]byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              replicas: {type: integer, maximum: 10}
              size: {type: string, enum: [small, large]}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec:
  replicas: "3"
`), "widget.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := typecheck.NewCustomResourceValidator(m.CRDs...)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range v.Validate(m.Objects[0].(*unstructured.Unstructured)) {
		fmt.Println(e)
	}
	// Output:
	// spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"
	// spec.size: Required value
}
