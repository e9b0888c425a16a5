package patchtypes_test

import (
	"strings"
	"testing"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// eval compiles and evaluates an ApplyConfiguration expression.
func eval(t *testing.T, expr string) *patchtypes.ObjectVal {
	t.Helper()
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := env.NewScope(celenv.ScopeOptions{})
	p := s.Compile(expr, celenv.Decls{Authorizer: true, PatchTypes: true}, patchtypes.ObjectType)
	if p.Err() != nil {
		t.Fatalf("Compile(%q): %v", expr, p.Err())
	}
	b := s.NewBatch(t.Context(), nil, &celenv.Input{}, runtimeBudget)
	r, err := b.Eval(p)
	if err != nil || r.Err != nil {
		t.Fatalf("Eval(%q): %v %v", expr, err, r.Err)
	}
	return r.Value.(*patchtypes.ObjectVal)
}

// TestCheckTypeNames mirrors upstream's TestCheckTypeNamesMatchFieldPathNames,
// with several mismatches reported in field order.
func TestCheckTypeNames(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`Object{spec: Object.spec{replicas: 1}}`, ""},
		{`Object{spec: Object.specx{replicas: 1}}`, `unexpected type name "Object.specx", expected "Object.spec", which matches field name path from root Object type`},
		{`Object{spec: Object.spec{containers: [Object.spec.containerz{}]}}`,
			`unexpected type name "Object.spec.containerz", expected "Object.spec.containers", which matches field name path from root Object type`},
		{`Object{m: {"a": Object.x{}}}`, `unexpected type name "Object.x", expected "Object.m", which matches field name path from root Object type`},
		{`Object{b: Object.z{}, a: Object.y{}}`, "unexpected type name \"Object.y\", expected \"Object.a\", which matches field name path from root Object type\n" +
			`unexpected type name "Object.z", expected "Object.b", which matches field name path from root Object type`},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			err := eval(t, tc.expr).CheckTypeNames()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("CheckTypeNames() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNative: a non-string map key fails the conversion of the field that
// holds it; nested, the failure becomes an error value inside the map.
func TestNative(t *testing.T) {
	_, err := eval(t, `Object{labels: {1: "a"}}`).Native()
	if err == nil || err.Error() != `fail to convert field "labels": map key '\x01' is of type types.Int, not string` {
		t.Errorf("Native() error = %v", err)
	}
	m, err := eval(t, `Object{metadata: Object.metadata{labels: {1: "a"}}}`).Native()
	if err != nil {
		t.Fatalf("Native() error = %v", err)
	}
	if e, ok := m["metadata"].(error); !ok || !strings.Contains(e.Error(), `fail to convert field "labels"`) {
		t.Errorf("Native()[metadata] = %#v, want an error value", m["metadata"])
	}
}

func TestEscapeKey(t *testing.T) {
	for in, want := range map[string]string{"a/b": "a~1b", "~": "~0", "~1": "~01", "": "", "/~/": "~1~0~1"} {
		if got := patchtypes.EscapeKey(in); got != want {
			t.Errorf("EscapeKey(%q) = %q, want %q", in, got, want)
		}
	}
}
