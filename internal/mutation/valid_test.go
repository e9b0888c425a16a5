package mutation

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/internal/builtin"
)

// replacements are what TestValidates puts in place of each node of the
// object: every JSON kind, maps and lists of the shapes associative lists
// check, and Go types unstructured data does not hold.
var replacements = []any{
	nil, "x", int64(1), float64(1.5), true,
	map[string]any{}, map[string]any{"undeclared": int64(1)}, map[string]any{"name": "n"},
	map[string]any{"name": nil}, map[string]any{"containerPort": int64(80)},
	[]any{}, []any{nil}, []any{"s"}, []any{int64(1)}, []any{map[string]any{}},
	[]any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}, []any{[]any{}},
	3, int32(3), []string{"s"}, map[string]string{"a": "b"},
}

// TestValidates replaces every node of a Deployment (and removes every map
// entry) in turn and checks validates against structured-merge-diff's
// validation with duplicates allowed: it may decline an object the library
// accepts only for Go types unstructured data does not hold, and must
// never accept one the library rejects.
func TestValidates(t *testing.T) {
	tc, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	d := &appsv1.Deployment{}
	if err := yaml.UnmarshalStrict([]byte(mergeLive), d); err != nil {
		t.Fatal(err)
	}
	u, err := builtin.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	pt := tc.parser.Type(tc.kinds[d.GroupVersionKind()])
	check := func(name string) {
		_, err := typed.AsTyped(value.NewValueInterface(u), pt.Schema, pt.TypeRef, typed.AllowDuplicates)
		got := validates(pt.Schema, pt.TypeRef, u, false)
		switch {
		case got && err != nil:
			t.Errorf("%s: validates accepts what the library rejects: %v", name, err)
		case !got && err == nil && jsonLike(u):
			t.Errorf("%s: validates declines JSON data the library accepts", name)
		}
		// Unique: a key repeated in an associative list is an error; keys
		// that are missing (defaulted) or not strings, integers or
		// booleans are left to the library, so only acceptance is checked.
		_, err = typed.AsTyped(value.NewValueInterface(u), pt.Schema, pt.TypeRef)
		if validates(pt.Schema, pt.TypeRef, u, true) && err != nil {
			t.Errorf("%s: validates (unique) accepts what the library rejects: %v", name, err)
		}
	}
	check("unchanged")
	if validates(pt.Schema, pt.TypeRef, u, true) {
		t.Fatal("validates (unique) accepts the duplicate container c")
	}
	// Without the duplicate and with every port's protocol, unique
	// validation must accept the object: the patch's fast path.
	spec := u["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	containers := spec["containers"].([]any)
	spec["containers"] = containers[:3]
	containers[0].(map[string]any)["ports"].([]any)[0].(map[string]any)["protocol"] = "TCP"
	if !validates(pt.Schema, pt.TypeRef, u, true) {
		t.Fatal("validates (unique) declines a Deployment with distinct keys")
	}
	check("no duplicates")
	n := 0
	perturb(u, "", func(path string, set func(any), del func()) {
		for i, r := range replacements {
			set(r)
			check(fmt.Sprintf("%s = #%d", path, i))
			n++
		}
		if del != nil {
			del()
			check(path + " removed")
		}
	})
	if n < 1000 {
		t.Fatalf("only %d replacements checked", n)
	}
}

// perturb calls f for every node under v with a setter that replaces the
// node (the original is restored after f) and, for map entries, a deleter.
func perturb(v any, path string, f func(path string, set func(any), del func())) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := path + "." + k
			f(p, func(r any) { v[k] = r }, func() { delete(v, k) })
			v[k] = e
			perturb(e, p, f)
		}
	case []any:
		for i, e := range v {
			p := fmt.Sprintf("%s[%d]", path, i)
			f(p, func(r any) { v[i] = r }, nil)
			v[i] = e
			perturb(e, p, f)
		}
	}
}

// jsonLike reports whether v holds only the Go types of JSON data.
func jsonLike(v any) bool {
	switch v := v.(type) {
	case nil, bool, string, int64, float64:
		return true
	case map[string]any:
		for _, e := range v {
			if !jsonLike(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range v {
			if !jsonLike(e) {
				return false
			}
		}
		return true
	}
	return false
}
