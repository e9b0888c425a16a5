package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/policy"
)

// gadgetCRD has defaults at every level structural defaulting reaches: a
// property, list items, additionalProperties values, and a non-nullable
// property that is null.
const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Cluster
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
              mode: {type: string, default: auto}
              note: {type: string, nullable: true, default: none}
              parts:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    size: {type: integer, default: 1}
                    tags: {type: array, items: {type: string}, default: [new]}
              limits:
                type: object
                additionalProperties:
                  type: object
                  properties:
                    max: {type: integer, default: 10}
`

// TestMutatingCRDDefaults: after each mutation, the object of a custom
// kind gets its CRD schema's defaults, as the API server's CRD handler
// defaults it (apiextensions-apiserver structural defaulting); the next
// mutation sees them.
func TestMutatingCRDDefaults(t *testing.T) {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(gadgetCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	p, b := mutatingPolicy(t, "gadgets", "Fail", "Never",
		`json:[JSONPatch{op: "add", path: "/spec/parts/-", value: {"name": "b"}}, JSONPatch{op: "add", path: "/spec/limits/cpu", value: {}}]`,
		`json:[JSONPatch{op: "add", path: "/metadata/labels", value: {"size": string(object.spec.parts[1].size)}}]`)
	p.Spec.MatchConstraints.ResourceRules[0].APIGroups = []string{"example.com"}
	p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"gadgets"}
	ev, err := policy.Compile(nil, nil, policy.Options{CRDs: []*unstructured.Unstructured{crd},
		MutatingPolicies: []*admissionregistrationv1.MutatingAdmissionPolicy{p}, MutatingBindings: []*admissionregistrationv1.MutatingAdmissionPolicyBinding{b}})
	if err != nil {
		t.Fatal(err)
	}
	if issues := ev.Issues(); len(issues) > 0 {
		t.Fatalf("Issues() = %v", issues)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"},
		"spec": map[string]any{"mode": "manual", "note": nil, "parts": []any{map[string]any{"name": "a", "size": int64(3)}}, "limits": map[string]any{}},
	}}
	req := &policy.Request{Operation: admissionv1.Create, Name: "g", Object: obj,
		Kind:     schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"},
		Resource: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}}
	d, err := ev.Evaluate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Allowed || d.Object == nil {
		t.Fatalf("Evaluate() = allowed %v, object %v; status %v; trace %v", d.Allowed, d.Object, d.Status, d.Mutations)
	}
	want := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g", "labels": map[string]any{"size": "1"}},
		"spec": map[string]any{
			"mode": "manual", // set: kept
			"note": nil,      // nullable: a null stays
			"parts": []any{
				map[string]any{"name": "a", "size": int64(3), "tags": []any{"new"}},
				map[string]any{"name": "b", "size": int64(1), "tags": []any{"new"}},
			},
			"limits": map[string]any{"cpu": map[string]any{"max": int64(10)}},
		},
	}
	if diff := cmp.Diff(want, d.Object.(*unstructured.Unstructured).Object); diff != "" {
		t.Errorf("mutated object mismatch (-want +got):\n%s", diff)
	}
	if obj.Object["spec"].(map[string]any)["parts"].([]any)[0].(map[string]any)["tags"] != nil {
		t.Error("Evaluate() modified the request's object")
	}
}
