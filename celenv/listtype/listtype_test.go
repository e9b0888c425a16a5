package listtype_test

import (
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/celenv/listtype"
)

func arraySchema(listType string, keys ...string) *spec.Schema {
	s := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type:  []string{"array"},
		Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}},
	}}
	if listType != "" {
		s.Extensions = spec.Extensions{"x-kubernetes-list-type": listType}
	}
	if len(keys) > 0 {
		ks := make([]any, len(keys))
		for i, k := range keys {
			ks[i] = k
		}
		s.Extensions["x-kubernetes-list-map-keys"] = ks
	}
	return s
}

func entry(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func e2(k1, k2 string, v int64) map[string]any { return entry("key1", k1, "key2", k2, "value", v) }

var (
	setSchema    = arraySchema("set")
	mapSchema    = arraySchema("map", "key1", "key2")
	ifSchema     = arraySchema("map", "if")
	wideSchema   = arraySchema("map", "key1", "key2", "key3", "key4")
	triSchema    = arraySchema("map", "key1", "key2", "key3")
	atomicSchema = arraySchema("atomic")
	plainSchema  = arraySchema("")
)

func TestConcatLists(t *testing.T) {
	tests := []struct {
		name    string
		schema  *spec.Schema
		a, b    []any
		want    []any
		wantErr string
	}{
		{name: "atomic appends", schema: atomicSchema, a: []any{"a", "b"}, b: []any{"b", "c"}, want: []any{"a", "b", "b", "c"}},
		{name: "no list type appends", schema: plainSchema, a: []any{int64(1)}, b: []any{int64(1)}, want: []any{int64(1), int64(1)}},
		{name: "empty plus list", schema: setSchema, a: nil, b: []any{int64(1)}, want: []any{int64(1)}},
		{name: "set union with literal", schema: setSchema, a: []any{int64(1), int64(2), int64(3)}, b: []any{int64(3), int64(4)},
			want: []any{int64(1), int64(2), int64(3), int64(4)}},
		{name: "set union keeps right order", schema: setSchema, a: []any{int64(1), int64(2), int64(3)}, b: []any{int64(30), int64(3), int64(5)},
			want: []any{int64(1), int64(2), int64(3), int64(30), int64(5)}},
		{name: "set keeps left duplicates", schema: setSchema, a: []any{int64(1), int64(1)}, b: []any{int64(1), int64(2), int64(2)},
			want: []any{int64(1), int64(1), int64(2)}},
		{name: "set int and double differ", schema: setSchema, a: []any{int64(1)}, b: []any{1.0}, want: []any{int64(1), 1.0}},
		{name: "set of lists", schema: setSchema, a: []any{[]any{"a"}}, b: []any{[]any{"x"}},
			wantErr: "listSet operations are only supported on lists of scalar values"},
		{name: "map merge overwrites in place and appends", schema: mapSchema,
			a:    []any{e2("k1v1", "k2v1", 1), e2("k1v2", "k2v2", 2)},
			b:    []any{e2("k1v1", "k2v1", 10), e2("k1v3", "k2v3", 3)},
			want: []any{e2("k1v1", "k2v1", 10), e2("k1v2", "k2v2", 2), e2("k1v3", "k2v3", 3)}},
		{name: "map merge with reserved-word key", schema: ifSchema,
			a:    []any{entry("if", "a", "value", int64(1)), entry("if", "b", "value", int64(2))},
			b:    []any{entry("if", "a", "value", int64(10)), entry("if", "c", "value", int64(3))},
			want: []any{entry("if", "a", "value", int64(10)), entry("if", "b", "value", int64(2)), entry("if", "c", "value", int64(3))}},
		{name: "map keys keep value boundaries", schema: wideSchema,
			a:    []any{entry("key1", "a b", "key2", "c", "key3", "d", "key4", "e", "value", int64(1))},
			b:    []any{entry("key1", "a", "key2", "b c", "key3", "d", "key4", "e", "value", int64(2))},
			want: []any{entry("key1", "a b", "key2", "c", "key3", "d", "key4", "e", "value", int64(1)), entry("key1", "a", "key2", "b c", "key3", "d", "key4", "e", "value", int64(2))}},
		{name: "map with three keys", schema: triSchema,
			a:    []any{entry("key1", "ta", "key2", "tb", "key3", "tc", "value", int64(1))},
			b:    []any{entry("key1", "ta", "key2", "tb", "key3", "tc", "value", int64(5))},
			want: []any{entry("key1", "ta", "key2", "tb", "key3", "tc", "value", int64(5))}},
		{name: "map missing key field", schema: ifSchema,
			a:    []any{entry("value", int64(1))},
			b:    []any{entry("value", int64(2)), entry("if", "x")},
			want: []any{entry("value", int64(2)), entry("if", "x")}},
		{name: "map duplicate new keys on the right are all appended", schema: ifSchema,
			a:    []any{entry("if", "a")},
			b:    []any{entry("if", "b", "value", int64(1)), entry("if", "b", "value", int64(2))},
			want: []any{entry("if", "a"), entry("if", "b", "value", int64(1)), entry("if", "b", "value", int64(2))}},
		{name: "invalid list type", schema: arraySchema("bag"), a: []any{}, b: []any{},
			wantErr: "invalid x-kubernetes-list-type, expected 'map', 'set' or 'atomic' but got bag"},
		{name: "not an array", schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}},
			wantErr: "schema is not of type array"},
		{name: "nil schema", wantErr: "schema is not of type array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := listtype.ConcatLists(tc.schema, tc.a, tc.b)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ConcatLists(%v, %v) error = %v, want %q", tc.a, tc.b, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ConcatLists(%v, %v) error: %v", tc.a, tc.b, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ConcatLists(%v, %v) mismatch (-want +got):\n%s", tc.a, tc.b, diff)
			}
		})
	}
}

func TestEqualLists(t *testing.T) {
	x := []any{e2("k1v1", "k2v1", 1), e2("k1v2", "k2v2", 2)}
	tests := []struct {
		name    string
		schema  *spec.Schema
		a, b    []any
		want    bool
		wantErr string
	}{
		{name: "atomic is ordered", schema: atomicSchema, a: []any{int64(1), int64(2)}, b: []any{int64(2), int64(1)}, want: false},
		{name: "atomic equal", schema: plainSchema, a: []any{int64(1), int64(2)}, b: []any{int64(1), 2.0}, want: true},
		{name: "set ignores order", schema: setSchema, a: []any{int64(1), int64(2), int64(3), int64(4)}, b: []any{int64(4), int64(3), int64(2), int64(1)}, want: true},
		{name: "set different elements", schema: setSchema, a: []any{int64(1), int64(2), int64(3)}, b: []any{int64(3), int64(30)}, want: false},
		{name: "set vs duplicates", schema: setSchema, a: []any{int64(1), int64(2), int64(3)}, b: []any{int64(1), int64(1), int64(3)}, want: false},
		{name: "duplicates vs set", schema: setSchema, a: []any{int64(1), int64(1), int64(1)}, b: []any{int64(1), int64(2), int64(3)}, want: false},
		{name: "set int and double differ", schema: setSchema, a: []any{int64(1)}, b: []any{1.0}, want: false},
		{name: "set of lists", schema: setSchema, a: []any{[]any{"a b", "c"}}, b: []any{[]any{"x"}},
			wantErr: "listSet operations are only supported on lists of scalar values"},
		{name: "set of lists against scalars", schema: setSchema, a: []any{"x"}, b: []any{[]any{"x"}},
			wantErr: "listSet operations are only supported on lists of scalar values"},
		{name: "map ignores order", schema: mapSchema,
			a: []any{e2("k1v1", "k2v1", 10), e2("k1v2", "k2v2", 2), e2("k1v3", "k2v3", 3)},
			b: []any{e2("k1v3", "k2v3", 3), e2("k1v1", "k2v1", 10), e2("k1v2", "k2v2", 2)}, want: true},
		{name: "map same keys different values", schema: mapSchema, a: x,
			b: []any{e2("k1v1", "k2v1", 10), e2("k1v2", "k2v2", 2)}, want: false},
		{name: "map vs duplicate keys", schema: mapSchema, a: x,
			b: []any{e2("k1v1", "k2v1", 1), e2("k1v1", "k2v1", 1)}, want: false},
		{name: "duplicate keys vs map", schema: mapSchema,
			a: []any{e2("k1v1", "k2v1", 1), e2("k1v1", "k2v1", 1)}, b: x, want: false},
		{name: "map different sizes", schema: mapSchema, a: x, b: x[:1], want: false},
		{name: "map with reserved-word key ignores order", schema: ifSchema,
			a: []any{entry("if", "a", "value", int64(1)), entry("if", "b", "value", int64(2))},
			b: []any{entry("if", "b", "value", int64(2)), entry("if", "a", "value", int64(1))}, want: true},
		{name: "map keys keep value boundaries", schema: wideSchema,
			a: []any{entry("key1", "a b", "key2", "c", "key3", "d", "key4", "e")},
			b: []any{entry("key1", "a", "key2", "b c", "key3", "d", "key4", "e")}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := listtype.EqualLists(tc.schema, tc.a, tc.b)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("EqualLists(%v, %v) error = %v, want %q", tc.a, tc.b, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("EqualLists(%v, %v) error: %v", tc.a, tc.b, err)
			}
			if got != tc.want {
				t.Errorf("EqualLists(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestListType(t *testing.T) {
	tests := []struct {
		name    string
		schema  *spec.Schema
		want    string
		keys    []string
		wantErr bool
	}{
		{name: "default", schema: plainSchema, want: listtype.ListTypeAtomic},
		{name: "atomic", schema: atomicSchema, want: listtype.ListTypeAtomic},
		{name: "set", schema: setSchema, want: listtype.ListTypeSet},
		{name: "map", schema: mapSchema, want: listtype.ListTypeMap, keys: []string{"key1", "key2"}},
		{name: "map keys as strings", schema: &spec.Schema{
			VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []string{"name"}}},
			SchemaProps:      spec.SchemaProps{Type: []string{"array"}},
		}, want: listtype.ListTypeMap, keys: []string{"name"}},
		{name: "invalid", schema: arraySchema("list"), wantErr: true},
		{name: "not array", schema: &spec.Schema{}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := listtype.ListType(tc.schema)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ListType() error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ListType() = %q, want %q", got, tc.want)
			}
			if keys := listtype.ListMapKeys(tc.schema); !tc.wantErr && !cmp.Equal(keys, tc.keys) {
				t.Errorf("ListMapKeys() = %v, want %v", keys, tc.keys)
			}
		})
	}
}

// TestListValueInCEL evaluates list-type values in CEL expressions, as
// upstream's TestListAdd does.
func TestListValueInCEL(t *testing.T) {
	vars := map[string]struct {
		schema *spec.Schema
		elems  []any
	}{
		"xSet": {setSchema, []any{int64(1), int64(2), int64(3)}},
		"ySet": {setSchema, []any{int64(3), int64(30)}},
		"zSet": {setSchema, []any{int64(30), int64(3), int64(2), int64(1)}},
		"xMap": {mapSchema, []any{e2("k1v1", "k2v1", 1), e2("k1v2", "k2v2", 2)}},
		"yMap": {mapSchema, []any{e2("k1v1", "k2v1", 10), e2("k1v3", "k2v3", 3)}},
		"zMap": {mapSchema, []any{e2("k1v3", "k2v3", 3), e2("k1v1", "k2v1", 10), e2("k1v2", "k2v2", 2)}},
		"tags": {atomicSchema, []any{"a", "b", "c"}},
		"sets": {setSchema, []any{[]any{"a"}}},
	}
	var opts []cel.EnvOption
	act := map[string]any{}
	for name, v := range vars {
		opts = append(opts, cel.Variable(name, cel.ListType(cel.DynType)))
		val, err := listtype.ListValue(v.schema, v.elems)
		if err != nil {
			t.Fatalf("ListValue(%s) error: %v", name, err)
		}
		act[name] = val
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, expr, wantErr string
	}{
		{name: "string list + literal list", expr: "(tags + ['d']) == ['a', 'b', 'c', 'd']"},
		{name: "set union with literal", expr: "(xSet + [3, 4]) == [1, 2, 3, 4]"},
		{name: "set union with set", expr: "(xSet + ySet) == [1, 2, 3, 30]"},
		{name: "set equality ignores order", expr: "(xSet + [4]) == [4, 3, 2, 1]"},
		{name: "chained set union", expr: "(xSet + [4] + [4, 5]) == [1, 2, 3, 4, 5]"},
		{name: "set union ignores order both ways", expr: "(xSet + ySet) == zSet && zSet == (xSet + ySet)"},
		{name: "sets differ", expr: "xSet != ySet"},
		{name: "set vs duplicates", expr: "xSet != [1, 1, 3]"},
		{name: "set of lists", expr: "sets == [['a']]", wantErr: "listSet operations are only supported on lists of scalar values"},
		{name: "set add non-list", expr: "(xSet + dyn(1)) == xSet", wantErr: "no such overload"},
		{name: "map merge overwrites in place", expr: "(xMap + yMap)[0].value == 10 && size(xMap + yMap) == 3"},
		{name: "map merge appends new keys", expr: "(xMap + yMap)[2].key1 == 'k1v3'"},
		{name: "map merge with literal", expr: "(xMap + [{'key1': 'k1v1', 'key2': 'k2v1', 'value': 99}])[0].value == 99"},
		{name: "map equality ignores order", expr: "(xMap + yMap) == zMap"},
		{name: "map lists differ", expr: "xMap != yMap && (xMap + yMap) != xMap"},
		{name: "plain list on the left is ordered", expr: "[3, 2, 1] != xSet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ast, iss := env.Compile(tc.expr)
			if iss.Err() != nil {
				t.Fatalf("Compile(%q) error: %v", tc.expr, iss.Err())
			}
			prg, err := env.Program(ast)
			if err != nil {
				t.Fatalf("Program(%q) error: %v", tc.expr, err)
			}
			out, _, err := prg.Eval(act)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Eval(%q) error = %v, want %q", tc.expr, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Eval(%q) error: %v", tc.expr, err)
			}
			if out.Value() != true {
				t.Errorf("Eval(%q) = %v, want true", tc.expr, out)
			}
		})
	}
}
