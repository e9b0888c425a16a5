// Package defaultdiff compares vapkit's defaulting of custom resources
// after a mutation (internal/mutation, TypeConverter.Default) with the
// structural defaulting the API server's CRD handler runs
// (k8s.io/apiextensions-apiserver pkg/apiserver/schema/defaulting), on
// generated objects.
package defaultdiff

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/internal/mutation"
)

// schemaYAML has defaults at every level structural defaulting reaches.
const schemaYAML = `type: object
properties:
  spec:
    type: object
    properties:
      mode: {type: string, default: auto}
      note: {type: string, nullable: true, default: none}
      count: {type: integer, default: 0}
      plain: {type: string}
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
            min: {type: integer, nullable: true, default: 1}
      nested:
        type: object
        default: {inner: {}}
        properties:
          inner:
            type: object
            properties:
              flag: {type: boolean, default: true}
      names:
        type: array
        items: {type: string, default: unnamed}
`

// upstream returns the API server's structural schema of schemaYAML.
func upstream(t *testing.T) *structuralschema.Structural {
	t.Helper()
	v1 := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.UnmarshalStrict([]byte(schemaYAML), v1); err != nil {
		t.Fatal(err)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// vapkit returns vapkit's converter knowing the schema as example.com/v1
// Widget.
func vapkit(t *testing.T) *mutation.TypeConverter {
	t.Helper()
	// Decoded as manifests decode CRDs: whole numbers are int64.
	raw, err := yaml.YAMLToJSON([]byte(schemaYAML))
	if err != nil {
		t.Fatal(err)
	}
	var su unstructured.Unstructured
	if err := su.UnmarshalJSON([]byte(`{"apiVersion": "v1", "kind": "Schema", "s": ` + string(raw) + `}`)); err != nil {
		t.Fatal(err)
	}
	s := su.Object["s"]
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": s}}},
		},
	}}
	tc, err := mutation.Builtin()
	if err == nil {
		tc, err = tc.WithCRDs([]*unstructured.Unstructured{crd})
	}
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// generate builds a Widget whose fields are, at random, absent, null or
// set (values of the right type, or of another one).
func generate(r *rand.Rand) map[string]any {
	pick := func(vals ...any) (any, bool) {
		i := r.IntN(len(vals) + 1)
		if i == len(vals) {
			return nil, false // absent
		}
		return vals[i], true
	}
	obj := func(fields map[string][]any) map[string]any {
		m := map[string]any{}
		for k, vals := range fields {
			if v, ok := pick(vals...); ok {
				m[k] = v
			}
		}
		return m
	}
	part := func() any {
		if r.IntN(5) == 0 {
			return nil
		}
		return obj(map[string][]any{"name": {"a", nil}, "size": {int64(4), nil}, "tags": {[]any{"x"}, []any{}, nil}})
	}
	spec := obj(map[string][]any{
		"mode":   {"manual", nil},
		"note":   {"n", nil},
		"count":  {int64(3), nil},
		"plain":  {"p", nil},
		"parts":  {[]any{}, []any{part()}, []any{part(), part(), part()}, nil},
		"limits": {map[string]any{}, map[string]any{"cpu": nil}, map[string]any{"cpu": obj(map[string][]any{"max": {int64(2), nil}, "min": {int64(0), nil}}), "mem": map[string]any{}}, nil},
		"nested": {map[string]any{}, map[string]any{"inner": nil}, map[string]any{"inner": map[string]any{"flag": false}}, nil},
		"names":  {[]any{"a", nil}, []any{}, nil},
	})
	out := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}
	if v, ok := pick(spec, nil); ok {
		out["spec"] = v
	}
	return out
}

// TestDefaultsAgree: 2,000 generated objects defaulted by both.
func TestDefaultsAgree(t *testing.T) {
	s, tc := upstream(t), vapkit(t)
	r := rand.New(rand.NewPCG(1, 2))
	changed := 0
	for i := range 2000 {
		in := generate(r)
		want := runtime.DeepCopyJSON(in)
		structuraldefaulting.Default(want, s)
		got := tc.Default(&unstructured.Unstructured{Object: runtime.DeepCopyJSON(in)}).(*unstructured.Unstructured).Object
		if diff := cmp.Diff(want, got); diff != "" {
			raw, _ := json.Marshal(in)
			t.Fatalf("object %d %s: vapkit's defaults differ from upstream's (-upstream +vapkit):\n%s", i, raw, diff)
		}
		if !cmp.Equal(in, want) {
			changed++
		}
	}
	// The generator must exercise defaulting, not only agree on no-ops.
	if changed < 500 {
		t.Errorf("only %d of 2000 objects changed under defaulting", changed)
	}
}
