// Package crvalidatediff compares vapkit's validation of custom resources
// against their CRD's schema (typecheck.CustomResourceValidator) with the
// API server's (k8s.io/apiextensions-apiserver v0.37.2: structural
// defaulting on decode, then pkg/apiserver/validation's schema validator
// and its conversion of kube-openapi's result to field errors), on
// generated schemas and objects.
package crvalidatediff

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/vapkit/vapkit/typecheck"
)

// gen draws schemas and objects.
type gen struct{ r *rand.Rand }

func (g gen) chance(n int) bool { return g.r.IntN(n) == 0 }

var formats = []string{"email", "uri", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "date", "date-time", "datetime", "duration", "byte", "k8s-short-name", "k8s-long-name", "no-such-format", "int32", "int64", "float", "double"}

var strs = []any{"", "a", "abc", "ABC", "a@b.c", "1.2.3.4", "::1", "10.0.0.0/8", "2024-01-02", "2024-01-02T03:04:05Z", "1h", "aGk=", "my-name", "x.y", "01:23:45:67:89:ab", "0b9a4f5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b", "http://x/y"}

// schema returns a random structural schema node of depth at most d.
func (g gen) schema(d int) map[string]any {
	types := []string{"string", "integer", "number", "boolean", "int-or-string"}
	if d > 0 {
		types = append(types, "object", "object", "array", "map")
	}
	s := map[string]any{}
	switch t := types[g.r.IntN(len(types))]; t {
	case "string":
		s["type"] = t
		if g.chance(3) {
			s["maxLength"] = int64(g.r.IntN(4))
		}
		if g.chance(4) {
			s["minLength"] = int64(g.r.IntN(3))
		}
		if g.chance(4) {
			s["pattern"] = []string{"^[a-z]+$", "^a", "[0-9]"}[g.r.IntN(3)]
		}
		if g.chance(3) {
			s["format"] = formats[g.r.IntN(len(formats))]
		}
		if g.chance(4) {
			s["enum"] = []any{"a", "abc", "x.y"}
		}
	case "integer", "number":
		s["type"] = t
		if g.chance(3) {
			s["minimum"] = float64(g.r.IntN(5) - 2)
			s["exclusiveMinimum"] = g.chance(2)
		}
		if g.chance(3) {
			s["maximum"] = float64(g.r.IntN(10))
			s["exclusiveMaximum"] = g.chance(2)
		}
		if g.chance(4) {
			s["multipleOf"] = []float64{2, 3, 0.5}[g.r.IntN(3)]
		}
		if g.chance(4) {
			s["format"] = formats[g.r.IntN(len(formats))]
		}
		if g.chance(5) {
			s["enum"] = []any{int64(1), int64(2), 2.5}
		}
	case "boolean":
		s["type"] = t
	case "int-or-string":
		s["x-kubernetes-int-or-string"] = true
		if g.chance(4) {
			s["pattern"] = "^[0-9]+%?$"
		}
		if g.chance(4) {
			s["maximum"] = float64(5)
		}
	case "object":
		s["type"] = "object"
		props := map[string]any{}
		var req []any
		for i := range 1 + g.r.IntN(3) {
			name := fmt.Sprintf("f%d", i)
			props[name] = g.schema(d - 1)
			if g.chance(3) {
				req = append(req, name)
			}
		}
		s["properties"] = props
		if len(req) > 0 {
			s["required"] = req
		}
		if g.chance(4) {
			s["maxProperties"] = int64(g.r.IntN(3))
		}
		if g.chance(5) {
			s["minProperties"] = int64(1)
		}
		if g.chance(4) {
			s["x-kubernetes-preserve-unknown-fields"] = true
		}
	case "map":
		s["type"] = "object"
		s["additionalProperties"] = g.schema(d - 1)
		if g.chance(3) {
			s["maxProperties"] = int64(g.r.IntN(3))
		}
	case "array":
		s["type"] = "array"
		s["items"] = g.schema(d - 1)
		switch g.r.IntN(4) {
		case 0: // a map list keyed by name, or by name and port
			item := g.schema(d - 1)
			item["type"] = "object"
			delete(item, "x-kubernetes-int-or-string")
			delete(item, "additionalProperties")
			delete(item, "items")
			props, _ := item["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
			}
			props["name"] = map[string]any{"type": "string", "maxLength": int64(2)}
			keys := []any{"name"}
			if g.chance(2) {
				props["port"] = map[string]any{"type": "integer", "maximum": float64(5)}
				keys = append(keys, "port")
			}
			item["properties"] = props
			s["items"] = item
			s["x-kubernetes-list-type"] = "map"
			s["x-kubernetes-list-map-keys"] = keys
		case 1:
			s["x-kubernetes-list-type"] = []string{"set", "atomic"}[g.r.IntN(2)]
		}
		if g.chance(3) {
			s["maxItems"] = int64(g.r.IntN(3))
		}
		if g.chance(4) {
			s["minItems"] = int64(1)
		}
	}
	if g.chance(6) {
		s["nullable"] = true
	}
	if g.chance(8) {
		if v := g.value(s, 0); v != nil {
			s["default"] = v
		}
	}
	return s
}

// value returns a value for schema s: mostly of its type, sometimes not.
func (g gen) value(s map[string]any, d int) any {
	if g.chance(12) {
		return nil
	}
	if g.chance(10) || d > 4 {
		return []any{"s", int64(7), 1.5, true, map[string]any{}, []any{}}[g.r.IntN(6)]
	}
	if props, ok := s["properties"].(map[string]any); ok && props["name"] != nil && g.chance(2) {
		// Map-list items: keys from a small set, so that old and new items
		// correlate.
		out := map[string]any{}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			p := props[name]
			if !g.chance(4) {
				out[name] = g.value(p.(map[string]any), d+1)
			}
		}
		out["name"] = []any{"a", "bb", "ccc"}[g.r.IntN(3)]
		if props["port"] != nil {
			out["port"] = int64(g.r.IntN(7))
		}
		return out
	}
	if ios, _ := s["x-kubernetes-int-or-string"].(bool); ios {
		if g.chance(2) {
			return int64(g.r.IntN(9))
		}
		return []any{"50%", "x", "7"}[g.r.IntN(3)]
	}
	switch s["type"] {
	case "string":
		return strs[g.r.IntN(len(strs))]
	case "integer":
		return int64(g.r.IntN(14) - 3)
	case "number":
		if g.chance(2) {
			return int64(g.r.IntN(14) - 3)
		}
		return float64(g.r.IntN(28)-6) / 2
	case "boolean":
		return g.chance(2)
	case "array":
		items, _ := s["items"].(map[string]any)
		out := []any{}
		n := g.r.IntN(4)
		if _, keyed := s["x-kubernetes-list-type"]; keyed {
			n = 2 + g.r.IntN(3) // sets and map lists: room for duplicates
		}
		for range n {
			out = append(out, g.value(items, d+1))
		}
		return out
	case "object":
		out := map[string]any{}
		if props, ok := s["properties"].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(props)) {
				p := props[name]
				if !g.chance(4) {
					out[name] = g.value(p.(map[string]any), d+1)
				}
			}
		}
		if _, ok := s["properties"]; ok && g.chance(4) {
			out["unknown"] = []any{"u", int64(1), nil, map[string]any{"x": nil}}[g.r.IntN(4)] // pruned unless preserved
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			for i := range g.r.IntN(4) {
				out[fmt.Sprintf("k%d", i)] = g.value(ap, d+1)
			}
		}
		return out
	}
	return nil
}

// mutate returns a copy of x with some values replaced, so that an update
// keeps some of old's values (and invalid ones) and changes others.
func (g gen) mutate(x any, s map[string]any, d int) any {
	if s == nil || g.chance(5) {
		return g.value(s, d)
	}
	switch v := x.(type) {
	case map[string]any:
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		ap, _ := s["additionalProperties"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e := v[k]
			ps, _ := props[k].(map[string]any)
			if ps == nil {
				ps = ap
			}
			switch {
			case g.chance(3):
				out[k] = g.mutate(e, ps, d+1)
			case g.chance(10):
			default:
				out[k] = runtime.DeepCopyJSONValue(e)
			}
		}
		return out
	case []any:
		items, _ := s["items"].(map[string]any)
		out := []any{}
		for _, e := range v {
			switch {
			case g.chance(3):
				out = append(out, g.mutate(e, items, d+1))
			case g.chance(8):
			default:
				out = append(out, runtime.DeepCopyJSONValue(e))
			}
		}
		if g.chance(4) {
			out = append(out, g.value(items, d+1))
		}
		if g.chance(4) && len(out) > 1 {
			out[0], out[len(out)-1] = out[len(out)-1], out[0]
		}
		return out
	}
	if g.chance(2) {
		return runtime.DeepCopyJSONValue(x)
	}
	return g.value(s, d)
}

// metadatas are the object metadata the create test draws from.
var metadatas = []string{
	`{"name": "w"}`,
	`{"name": "w", "namespace": "default"}`,
	`{"name": "Bad_Name", "namespace": "default"}`,
	`{"generateName": "w-", "namespace": "default"}`,
	`{"generateName": "Bad_", "namespace": "default"}`,
	`{"namespace": "default"}`,
	`{"name": "w", "namespace": "default", "labels": {"a": "b"}, "annotations": {"x": "y"}, "finalizers": ["example.com/f"]}`,
	`{"name": "w", "namespace": "default", "labels": {"bad key!": "x"}}`,
	`{"name": "w", "namespace": "default", "labels": {"a": 1}}`,
	`"not an object"`,
}

// crd wraps a spec schema into a CRD for example.com/v1 Widget, of the
// scope Namespaced (Cluster when scope is "Cluster").
func crd(spec map[string]any, scope ...string) map[string]any {
	sc := "Namespaced"
	if len(scope) > 0 {
		sc = scope[0]
	}
	root := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string"},
			"kind":       map[string]any{"type": "string"},
			"metadata":   map[string]any{"type": "object"},
			"spec":       spec,
		},
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": sc,
			"names":    map[string]any{"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": root}}},
		},
	}
}

// upstreamSchema returns the API server's validator and structural
// schema of the CRD.
func upstreamSchema(t *testing.T, crdObj map[string]any) (apiextensionsvalidation.SchemaValidator, *structuralschema.Structural) {
	t.Helper()
	raw, err := json.Marshal(crdObj["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"])
	if err != nil {
		t.Fatal(err)
	}
	v1 := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal(raw, v1); err != nil {
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
	validator, _, err := apiextensionsvalidation.NewSchemaValidator(internal)
	if err != nil {
		t.Fatal(err)
	}
	return validator, s
}

// asDecoded returns a copy of obj as the API server holds it after
// decoding with structural schema s: pruned, non-nullable nulls without
// defaults dropped, defaulted.
func asDecoded(obj map[string]any, s *structuralschema.Structural) map[string]any {
	obj = runtime.DeepCopyJSON(obj)
	structuralpruning.Prune(obj, s, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, s)
	structuraldefaulting.Default(obj, s)
	return obj
}

// upstreamUpdateErrors defaults both objects as the API server does on
// decoding and returns its ratcheting schema validation errors, then its
// list-type ones when the old object has none.
func upstreamUpdateErrors(t *testing.T, crdObj, obj, old map[string]any) []string {
	t.Helper()
	validator, s := upstreamSchema(t, crdObj)
	obj, old = asDecoded(obj, s), asDecoded(old, s)
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: s})
	var out []string
	errs := apiextensionsvalidation.ValidateCustomResourceUpdate(nil, obj, old, validator, apiextensionsvalidation.WithRatcheting(correlated))
	if len(structurallisttype.ValidateListSetsAndMaps(nil, s, old)) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s, obj)...)
	}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// upstreamErrors defaults obj as the API server does on decoding and
// returns the errors of the CRD handler's create validation
// (customresource strategy Validate: type meta, metadata, schema, embedded
// resources, list types, CEL rules).
func upstreamErrors(t *testing.T, crdObj map[string]any, obj map[string]any) []string {
	t.Helper()
	validator, s := upstreamSchema(t, crdObj)
	namespaced := crdObj["spec"].(map[string]any)["scope"] == "Namespaced"
	strategy := customresource.NewStrategy(nil, namespaced, schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, validator, nil, s, nil, nil, nil)
	obj = asDecoded(obj, s)
	// rest.BeforeCreate generates the name before validating, with a
	// random suffix; vapkit's is xxxxx, so the test's is too.
	if m, ok := obj["metadata"].(map[string]any); ok {
		if gn, _ := m["generateName"].(string); gn != "" && m["name"] == nil {
			m["name"] = gn + "xxxxx"
		}
		// rest.BeforeCreate drops the namespace of a cluster-scoped
		// object before validating it.
		if !namespaced {
			delete(m, "namespace")
		}
	}
	var out []string
	for _, e := range strategy.Validate(context.Background(), &unstructured.Unstructured{Object: obj}) {
		out = append(out, e.Error())
	}
	return out
}

// upstreamSchemaErrors defaults obj as the API server does on decoding and
// returns its schema validation errors, then its list-type ones.
func upstreamSchemaErrors(t *testing.T, crdObj map[string]any, obj map[string]any) []string {
	t.Helper()
	validator, s := upstreamSchema(t, crdObj)
	obj = asDecoded(obj, s)
	var out []string
	errs := apiextensionsvalidation.ValidateCustomResource(nil, obj, validator)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s, obj)...)
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// decode returns x written as JSON and read back as manifests and the
// API server read objects (whole numbers int64).
func decode(t *testing.T, x map[string]any) *unstructured.Unstructured {
	t.Helper()
	raw, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestValidationAgrees: 300 generated schemas, 20 objects each.
func TestValidationAgrees(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(3, 4))}
	refused, duplicates, total := 0, 0, 0
	for i := range 300 {
		spec := g.schema(3)
		scope := []string{"Namespaced", "Cluster"}[g.r.IntN(2)]
		c := crd(spec, scope)
		v, err := typecheck.NewCustomResourceValidator(decode(t, c))
		if err != nil {
			t.Fatal(err)
		}
		for j := range 20 {
			// Mostly metadata valid for the scope, so that the schema's
			// errors are not drowned.
			m := `{"name": "w", "namespace": "default"}`
			if scope == "Cluster" {
				m = `{"name": "w"}`
			}
			if g.chance(4) {
				m = metadatas[g.r.IntN(len(metadatas))]
			}
			var meta any
			if err := json.Unmarshal([]byte(m), &meta); err != nil {
				t.Fatal(err)
			}
			obj := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta}
			if !g.chance(10) {
				obj["spec"] = g.value(spec, 0)
			}
			// Both read the object as JSON, as the server receives it.
			u := decode(t, obj)
			want := upstreamErrors(t, c, u.Object)
			var got []string
			for _, e := range v.Validate(u) {
				got = append(got, e.Error())
			}
			// The server's order follows Go map iteration; vapkit sorts.
			slices.Sort(want)
			slices.Sort(got)
			total++
			if len(want) > 0 {
				refused++
			}
			if strings.Contains(strings.Join(want, "\n"), "Duplicate value") {
				duplicates++
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				sj, _ := json.Marshal(spec)
				oj, _ := json.Marshal(obj)
				t.Fatalf("schema %d object %d differ\nschema %s\nobject %s\nupstream:\n%s\nvapkit:\n%s", i, j, sj, oj, strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		}
	}
	// The generator must exercise refusals, not only agree on valid objects.
	if refused < total/4 || refused > total*3/4 {
		t.Errorf("%d of %d objects refused; the generator is unbalanced", refused, total)
	}
	// ... and duplicate list items.
	if duplicates < total/200 {
		t.Errorf("only %d of %d objects have duplicate list items", duplicates, total)
	}
	t.Logf("%d objects, %d refused (%d with duplicate list items), 0 differences", total, refused, duplicates)
}

// TestUpdateValidationAgrees: 300 generated schemas, 20 updates each, the
// new object a mutation of the old one.
func TestUpdateValidationAgrees(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(5, 6))}
	refused, ratcheted, total := 0, 0, 0
	for i := range 300 {
		spec := g.schema(3)
		c := crd(spec)
		v, err := typecheck.NewCustomResourceValidator(decode(t, c))
		if err != nil {
			t.Fatal(err)
		}
		for j := range 20 {
			meta := map[string]any{"name": "w", "namespace": "default"}
			oldObj := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": g.value(spec, 0)}
			newObj := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": g.mutate(oldObj["spec"], spec, 0)}
			o, n := decode(t, oldObj), decode(t, newObj)
			want := upstreamUpdateErrors(t, c, n.Object, o.Object)
			var got []string
			for _, e := range v.ValidateUpdate(n, o) {
				got = append(got, e.Error())
			}
			slices.Sort(want)
			slices.Sort(got)
			total++
			if len(want) > 0 {
				refused++
			}
			if len(want) < len(v.Validate(n)) {
				ratcheted++
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				sj, _ := json.Marshal(spec)
				oj, _ := json.Marshal(o.Object)
				nj, _ := json.Marshal(n.Object)
				t.Fatalf("schema %d update %d differ\nschema %s\nold %s\nnew %s\nupstream:\n%s\nvapkit:\n%s", i, j, sj, oj, nj, strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		}
	}
	// The generator must exercise refusals and ratcheting.
	if refused < total/5 || ratcheted < total/10 {
		t.Errorf("%d of %d updates refused, %d ratcheted; the generator is unbalanced", refused, total, ratcheted)
	}
	t.Logf("%d updates, %d refused, %d with errors ratcheted, 0 differences", total, refused, ratcheted)
}
