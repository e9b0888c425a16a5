package celenv_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// TestMutationExpressions evaluates mutation expressions as the API server's
// TestTypeResolver and TestCELOptional (pkg/cel/mutation) do, in every
// supported version: the results are rendered as JSON (Object values as
// their native maps, JSON patches as {op, path, from, value}).
func TestMutationExpressions(t *testing.T) {
	tests := []struct {
		name, expr string
		want       []*cel.Type // nil: ObjectType
		out        string      // JSON of the value
		compileErr string      // substring of the compile error
		evalErr    string      // substring of the evaluation error
	}{
		{name: "not an object", expr: `string(114514)`, compileErr: "must evaluate to Object but got string"},
		{name: "empty", expr: `Object{}`, out: `{}`},
		{name: "nested", expr: `Object{spec: Object.spec{replicas: 3}}`, out: `{"spec":{"replicas":3}}`},
		{name: "containers", expr: `Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: "nginx", image: "nginx:1.14.2", ports: [Object.spec.template.spec.containers.ports{containerPort: 80}]}]}}}}`,
			out: `{"spec":{"template":{"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx","ports":[{"containerPort":80}]}]}}}}`},
		{name: "list of ints", expr: `Object{intList: [1, 2, 3]}`, out: `{"intList":[1,2,3]}`},
		{name: "map string-to-string", expr: `Object{annotations: {"foo": "bar"}}`, out: `{"annotations":{"foo":"bar"}}`},
		{name: "field access", expr: `Object{spec: Object.spec{replicas: Object{spec: Object.spec{replicas: 3}}.spec.replicas + 1}}`, out: `{"spec":{"replicas":4}}`},
		{name: "equality", expr: `Object{spec: Object.spec{replicas: 3}} == Object{spec: Object.spec{replicas: 1 + 2}}`, want: []*cel.Type{cel.BoolType}, out: `true`},
		{name: "inequality of names", expr: `dyn(Object{}) == Object.spec{}`, want: []*cel.Type{cel.BoolType}, out: `false`},
		{name: "has", expr: `has(Object{spec: 1}.spec) && !has(Object{}.spec)`, want: []*cel.Type{cel.BoolType}, out: `true`},
		{name: "invalid type", expr: `Invalid{}`, compileErr: "undeclared reference to 'Invalid'"},
		{name: "root of another name", expr: `Object.spec.metadata{}`, compileErr: "must evaluate to Object but got Object.spec.metadata"},
		{name: "dyn result", expr: `dyn(Object{})`, compileErr: "must evaluate to Object but got dyn"},
		{name: "optional none omits the field", expr: `Object{?spec: optional.none(), kind: "x"}`, out: `{"kind":"x"}`},
		{name: "optional of zero value", expr: `Object{?spec: optional.ofNonZeroValue(Object.spec{?replicas: Object{}.?replicas})}`, out: `{}`},
		{name: "escapeKey", expr: `jsonpatch.escapeKey("a/b~c~1") == "a~1b~0c~01"`, want: []*cel.Type{cel.BoolType}, out: `true`},
		{name: "JSONPatch add", expr: `[JSONPatch{op: "add", path: "/spec/replicas", value: 3}]`, want: jp, out: `[{"op":"add","path":"/spec/replicas","value":3}]`},
		{name: "JSONPatch conditional", expr: `[true ? JSONPatch{op: "add", path: "/x", value: 3} : JSONPatch{op: "remove", path: "/x"}]`, want: jp, out: `[{"op":"add","path":"/x","value":3}]`},
		{name: "JSONPatch move", expr: `[JSONPatch{op: "move", from: "/a", path: "/b"}]`, want: jp, out: `[{"from":"/a","op":"move","path":"/b"}]`},
		{name: "JSONPatch invalid op accepted", expr: `[JSONPatch{op: "invalid", path: "/x", value: 3}]`, want: jp, out: `[{"op":"invalid","path":"/x","value":3}]`},
		{name: "JSONPatch missing path accepted", expr: `[JSONPatch{op: "add", value: 3}]`, want: jp, out: `[{"op":"add","path":"","value":3}]`},
		{name: "JSONPatch invalid value", expr: `[JSONPatch{op: "add", path: "/x", value: Invalid{}}]`, want: jp, compileErr: "undeclared reference to 'Invalid'"},
		{name: "JSONPatch op type", expr: `[JSONPatch{op: 1, path: "/x", value: 3}]`, want: jp, compileErr: "expected type of field 'op' is 'string' but provided type is 'int'"},
		{name: "JSONPatch path type", expr: `[JSONPatch{op: "add", path: 1, value: 3}]`, want: jp, compileErr: "expected type of field 'path' is 'string' but provided type is 'int'"},
		{name: "JSONPatch from type", expr: `[JSONPatch{op: "move", from: 1, path: "/x"}]`, want: jp, compileErr: "expected type of field 'from' is 'string' but provided type is 'int'"},
		{name: "JSONPatch dyn op", expr: `[JSONPatch{op: dyn(1), path: "/x"}]`, want: jp, evalErr: "unexpected type int64 for JSONPatchType 'op' field"},
		{name: "JSONPatch fields", expr: `JSONPatch{op: "add", path: "/x"}.op + JSONPatch{path: "/x"}.from`, want: []*cel.Type{cel.StringType}, out: `"add"`},
		{name: "JSONPatch has", expr: `has(JSONPatch{op: "add"}.op) && !has(JSONPatch{op: "add"}.path) && !has(JSONPatch{}.value)`, want: []*cel.Type{cel.BoolType}, out: `true`},
		{name: "JSONPatch equality", expr: `JSONPatch{op: "add", value: 1} == JSONPatch{op: "add", value: 1} && JSONPatch{op: "add"} != JSONPatch{op: "add", value: 1}`, want: []*cel.Type{cel.BoolType}, out: `true`},
		{name: "list result type", expr: `{}`, want: jp, compileErr: "must evaluate to list(JSONPatch) but got map(dyn, dyn)"},
	}
	for _, v := range []celenv.Version{celenv.MinVersion, celenv.MaxVersion} {
		env, err := celenv.New(celenv.Options{Version: v})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			t.Run(v.String()+"/"+tc.name, func(t *testing.T) {
				want := tc.want
				if want == nil {
					want = []*cel.Type{patchtypes.ObjectType}
				}
				s := env.NewScope(celenv.ScopeOptions{})
				p := s.Compile(tc.expr, celenv.Decls{Authorizer: true, PatchTypes: true}, want...)
				if tc.compileErr != "" {
					if p.Err() == nil || !strings.Contains(p.Err().Detail, tc.compileErr) {
						t.Fatalf("Compile(%q) error = %v, want it to contain %q", tc.expr, p.Err(), tc.compileErr)
					}
					return
				}
				if p.Err() != nil {
					t.Fatalf("Compile(%q) error = %v", tc.expr, p.Err().Detail)
				}
				b := s.NewBatch(t.Context(), nil, &celenv.Input{}, runtimeBudget)
				r, err := b.Eval(p)
				if err != nil {
					t.Fatal(err)
				}
				if tc.evalErr != "" {
					if r.Err == nil || !strings.Contains(r.Err.Error(), tc.evalErr) {
						t.Fatalf("Eval(%q) error = %v, want it to contain %q", tc.expr, r.Err, tc.evalErr)
					}
					return
				}
				if r.Err != nil {
					t.Fatalf("Eval(%q) error = %v", tc.expr, r.Err)
				}
				if got := render(t, r.Value); got != tc.out {
					t.Errorf("Eval(%q) = %s, want %s", tc.expr, got, tc.out)
				}
			})
		}
	}
}

var jp = []*cel.Type{patchtypes.JSONPatchListType}

// render turns a mutation result into JSON.
func render(t *testing.T, v ref.Val) string {
	t.Helper()
	var native any
	switch x := v.(type) {
	case *patchtypes.ObjectVal:
		m, err := x.Native()
		if err != nil {
			t.Fatal(err)
		}
		native = m
	default:
		if l, err := v.ConvertToNative(reflect.TypeFor[[]*patchtypes.JSONPatchVal]()); err == nil {
			var ops []map[string]any
			for _, p := range l.([]*patchtypes.JSONPatchVal) {
				op := map[string]any{"op": p.Op, "path": p.Path}
				if p.From != "" {
					op["from"] = p.From
				}
				if p.Val != nil {
					op["value"] = p.Val.Value()
				}
				ops = append(ops, op)
			}
			native = ops
		} else {
			native = v.Value()
		}
	}
	b, err := json.Marshal(native)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestVariablesDoNotSeePatchTypes: variables are compiled without the
// mutation types, as the API server compiles them.
func TestVariablesDoNotSeePatchTypes(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := env.NewScope(celenv.ScopeOptions{})
	v := s.AddVariable("o", `Object.spec{replicas: 1}`)
	if v.Err() == nil || !strings.Contains(v.Err().Detail, "undeclared reference to 'Object.spec'") {
		t.Fatalf("variable error = %v, want undeclared reference to 'Object.spec'", v.Err())
	}
	s.AddVariable("l", `[]`)
	p := s.Compile(`[JSONPatch{op: "add", path: "/x", value: 1}] + variables.l`, celenv.Decls{Authorizer: true, PatchTypes: true}, jp...)
	if p.Err() == nil || p.Err().Detail != "must evaluate to list(JSONPatch) but got list(dyn)" {
		t.Fatalf("Compile error = %v, want must evaluate to list(JSONPatch) but got list(dyn)", p.Err())
	}
	p = s.Compile(`Object{}`, celenv.Decls{Authorizer: true}, patchtypes.ObjectType)
	if p.Err() == nil || !strings.Contains(p.Err().Detail, "undeclared reference to 'Object'") {
		t.Fatalf("Compile without PatchTypes error = %v, want undeclared reference", p.Err())
	}
}
