package mutation_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/internal/mutation"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
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
            properties:
              size: {type: integer}
              tags: {type: array, items: {type: string}}
              set: {type: array, items: {type: string}, x-kubernetes-list-type: set}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items:
                  type: object
                  properties:
                    port: {type: integer}
                    protocol: {type: string, default: TCP}
                    name: {type: string}
              free: {type: object, x-kubernetes-preserve-unknown-fields: true}
              sel: {type: object, x-kubernetes-map-type: atomic, properties: {a: {type: string}}}
`

const widget = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: prod, labels: {a: b}}
spec:
  size: 1
  set: [x]
  ports: [{port: 80, protocol: TCP, name: http}]
  free: {anything: {goes: 1}}
`

func TestApplyCRD(t *testing.T) {
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(widgetCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	base, err := mutation.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := base.WithCRDs([]*unstructured.Unstructured{&crd})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, expr, want, err string }{
		{name: "merge into a set, a keyed list with a defaulted key, labels and a free subtree",
			expr: `Object{metadata: Object.metadata{labels: {"c": "d"}}, spec: Object.spec{set: ["y"], ports: [Object.spec.ports{port: 80, name: "web"}], free: Object.spec.free{new: [1]}}}`,
			want: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"labels":{"a":"b","c":"d"},"name":"w","namespace":"prod"},"spec":{"free":{"anything":{"goes":1},"new":[1]},"ports":[{"name":"web","port":80,"protocol":"TCP"}],"set":["x","y"],"size":1}}`},
		{name: "unknown field", expr: `Object{spec: Object.spec{nope: 1}}`,
			err: "error applying patch: failed to convert patch object to typed object: .spec.nope: field not declared in schema"},
		{name: "list without list type is atomic", expr: `Object{spec: Object.spec{tags: ["a"], sel: Object.spec.sel{a: "b"}}}`,
			err: "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.sel, .spec.tags"},
	}
	for _, tc0 := range tests {
		t.Run(tc0.name, func(t *testing.T) {
			live := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(widget), &live.Object); err != nil {
				t.Fatal(err)
			}
			v := evalMutation(t, tc0.expr, patchtypes.ObjectType, live)
			got, err := mutation.Apply(tc, live, v.(*patchtypes.ObjectVal))
			if tc0.err != "" {
				if err == nil || err.Error() != tc0.err {
					t.Fatalf("Apply() error = %v, want %s", err, tc0.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc0.want, strings.TrimSpace(string(b))); diff != "" {
				t.Errorf("Apply() (-want +got):\n%s", diff)
			}
		})
	}
}
