package celenv_test

import (
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
)

// TestDriftTwoVarComprehensions132: the 1.32 API server (cel-go v0.22.0)
// leaves the second variable of a two-variable comprehension over a range
// that is no list or map untyped. The details were recorded from the
// plugin compiler of k8s.io/apiserver v0.32.13 (CompileCELExpression,
// StoredExpressions, params and authorizer declared); "" means it compiles.
// Internal marks the compiler's "unexpected compilation error", which
// upstream classifies as an internal error.
func TestDriftTwoVarComprehensions132(t *testing.T) {
	tests := []struct {
		expr, detail string
		internal     bool
	}{
		{"object.metadata.labels.all(k, v, k.startsWith('app') || v != '')",
			"compilation failed: ERROR: <input>:1:59: found no matching overload for '_!=_' applied to '(, string)'\n | object.metadata.labels.all(k, v, k.startsWith('app') || v != '')\n | ..........................................................^", false},
		{"object.metadata.labels.exists(k, v, v in ['a'])",
			"compilation failed: ERROR: <input>:1:39: found no matching overload for '@in' applied to '(, list(string))'\n | object.metadata.labels.exists(k, v, v in ['a'])\n | ......................................^", false},
		{"object.metadata.labels.all(k, v, v.startsWith('a'))",
			"compilation failed: ERROR: <input>:1:46: found no matching overload for 'startsWith' applied to '.(string)'\n | object.metadata.labels.all(k, v, v.startsWith('a'))\n | .............................................^", false},
		{"object.metadata.labels.all(k, v, size(v) > 0)",
			"compilation failed: ERROR: <input>:1:38: found no matching overload for 'size' applied to '()'\n | object.metadata.labels.all(k, v, size(v) > 0)\n | .....................................^", false},
		{"object.metadata.labels.all(k, v, v + 1 > 2)",
			"compilation failed: ERROR: <input>:1:36: found no matching overload for '_+_' applied to '(, int)'\n | object.metadata.labels.all(k, v, v + 1 > 2)\n | ...................................^", false},
		{"object.metadata.labels.all(k, v, v[0] == 'a')",
			"compilation failed: ERROR: <input>:1:35: found no matching overload for '_[_]' applied to '(, int)'\n | object.metadata.labels.all(k, v, v[0] == 'a')\n | ..................................^", false},
		{"object.metadata.labels.all(k, v, v.x == 1)",
			"compilation failed: ERROR: <input>:1:35: type '' does not support field selection\n | object.metadata.labels.all(k, v, v.x == 1)\n | ..................................^", false},
		{"object.metadata.labels.all(k, v, has(v.x))",
			"compilation failed: ERROR: <input>:1:37: type '' does not support field selection\n | object.metadata.labels.all(k, v, has(v.x))\n | ....................................^", false},
		{"object.metadata.labels.all(k, v, v)",
			"compilation failed: ERROR: <input>:1:34: expected type 'bool' but found ''\n | object.metadata.labels.all(k, v, v)\n | .................................^", false},
		{"object.metadata.labels.all(k, v, dyn(v) != '')",
			"unexpected compilation error: missing type conversion to proto: ", true},
		{"object.metadata.labels.all(k, v, [v, 1].size() == 2)",
			"unexpected compilation error: missing type conversion to proto: ", true},
		{"object.metadata.labels.all(k, v, k != '')",
			"", false},
		{"object.metadata.labels.existsOne(k, v, v == 'a')",
			"compilation failed: ERROR: <input>:1:42: found no matching overload for '_==_' applied to '(, string)'\n | object.metadata.labels.existsOne(k, v, v == 'a')\n | .........................................^", false},
		{"object.metadata.labels.transformList(k, v, v).size() > 0",
			"unexpected compilation error: missing type conversion to proto: ", true},
		{"object.metadata.labels.transformList(k, v, v == 'a', k).size() > 0",
			"compilation failed: ERROR: <input>:1:46: found no matching overload for '_==_' applied to '(, string)'\n | object.metadata.labels.transformList(k, v, v == 'a', k).size() > 0\n | .............................................^", false},
		{"object.metadata.labels.transformMap(k, v, v).size() > 0",
			"compilation failed: ERROR: <input>:1:36: expected type 'map(_var0, _var1)' but found 'map(dyn, )'\n | object.metadata.labels.transformMap(k, v, v).size() > 0\n | ...................................^", false},
		{"object.metadata.labels.transformMapEntry(k, v, {k: k}).size() > 0",
			"", false},
		{"object.metadata.labels.transformList(k, v, v)",
			"must evaluate to bool but got list(dyn)", false},
		{"object.metadata.labels.all(k, v, v.all(x, x == 'a'))",
			"compilation failed: ERROR: <input>:1:34: expression of type '' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.metadata.labels.all(k, v, v.all(x, x == 'a'))\n | .................................^", false},
		{"object.metadata.labels.all(k, v, v.all(a, b, b == 1))",
			"compilation failed: ERROR: <input>:1:34: expression of type '' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.metadata.labels.all(k, v, v.all(a, b, b == 1))\n | .................................^\nERROR: <input>:1:48: found no matching overload for '_==_' applied to '(, int)'\n | object.metadata.labels.all(k, v, v.all(a, b, b == 1))\n | ...............................................^", false},
		{"object.metadata.labels.all(k, v, v.x.all(a, b, b == 1))",
			"compilation failed: ERROR: <input>:1:35: type '' does not support field selection\n | object.metadata.labels.all(k, v, v.x.all(a, b, b == 1))\n | ..................................^\nERROR: <input>:1:50: found no matching overload for '_==_' applied to '(, int)'\n | object.metadata.labels.all(k, v, v.x.all(a, b, b == 1))\n | .................................................^", false},
		{"object.metadata.labels.all(k, v, [v].all(i, x, x == 1))",
			"unexpected compilation error: missing type conversion to proto: ", true},
		{"object.metadata.labels.all(k, v, {k: v}.all(a, b, b == 1))",
			"compilation failed: ERROR: <input>:1:53: found no matching overload for '_==_' applied to '(, int)'\n | object.metadata.labels.all(k, v, {k: v}.all(a, b, b == 1))\n | ....................................................^", false},
		{"object.metadata.labels.all(k, v, object.metadata.labels.all(a, b, b == v))",
			"compilation failed: ERROR: <input>:1:69: found no matching overload for '_==_' applied to '(, )'\n | object.metadata.labels.all(k, v, object.metadata.labels.all(a, b, b == v))\n | ....................................................................^", false},
		{"object.a.all(k, v, v.all(k2, v2, v2.all(k3, v3, v3 == 1)))",
			"compilation failed: ERROR: <input>:1:20: expression of type '' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.a.all(k, v, v.all(k2, v2, v2.all(k3, v3, v3 == 1)))\n | ...................^\nERROR: <input>:1:34: expression of type '' cannot be range of a comprehension (must be list, map, or dynamic)\n | object.a.all(k, v, v.all(k2, v2, v2.all(k3, v3, v3 == 1)))\n | .................................^\nERROR: <input>:1:52: found no matching overload for '_==_' applied to '(, int)'\n | object.a.all(k, v, v.all(k2, v2, v2.all(k3, v3, v3 == 1)))\n | ...................................................^", false},
		{"[object.metadata.labels].all(i, m, m.all(k, v, v != ''))",
			"compilation failed: ERROR: <input>:1:50: found no matching overload for '_!=_' applied to '(, string)'\n | [object.metadata.labels].all(i, m, m.all(k, v, v != ''))\n | .................................................^", false},
		{"[1, 2].all(i, v, object.metadata.labels.all(k, w, w == v))",
			"compilation failed: ERROR: <input>:1:53: found no matching overload for '_==_' applied to '(, int)'\n | [1, 2].all(i, v, object.metadata.labels.all(k, w, w == v))\n | ....................................................^", false},
		{"object.spec.containers.all(i, c, c.name != '')",
			"compilation failed: ERROR: <input>:1:35: type '' does not support field selection\n | object.spec.containers.all(i, c, c.name != '')\n | ..................................^", false},
		{"1.all(k, v, v == 1)",
			"compilation failed: ERROR: <input>:1:1: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)\n | 1.all(k, v, v == 1)\n | ^\nERROR: <input>:1:15: found no matching overload for '_==_' applied to '(, int)'\n | 1.all(k, v, v == 1)\n | ..............^", false},
		{"optional.none().all(k, v, v == 1)",
			"compilation failed: ERROR: <input>:1:14: expression of type 'optional_type(_var0)' cannot be range of a comprehension (must be list, map, or dynamic)\n | optional.none().all(k, v, v == 1)\n | .............^\nERROR: <input>:1:29: found no matching overload for '_==_' applied to '(, int)'\n | optional.none().all(k, v, v == 1)\n | ............................^", false},
		{"undefinedVar.all(a, b, b == 1)",
			"compilation failed: ERROR: <input>:1:1: undeclared reference to 'undefinedVar' (in container '')\n | undefinedVar.all(a, b, b == 1)\n | ^\nERROR: <input>:1:26: found no matching overload for '_==_' applied to '(, int)'\n | undefinedVar.all(a, b, b == 1)\n | .........................^", false},
		{"object.metadata.labels.all(k, v, v != '' && undefinedVar)",
			"compilation failed: ERROR: <input>:1:36: found no matching overload for '_!=_' applied to '(, string)'\n | object.metadata.labels.all(k, v, v != '' && undefinedVar)\n | ...................................^\nERROR: <input>:1:45: undeclared reference to 'undefinedVar' (in container '')\n | object.metadata.labels.all(k, v, v != '' && undefinedVar)\n | ............................................^", false},
		{"params.all(k, v, v != '')",
			"compilation failed: ERROR: <input>:1:20: found no matching overload for '_!=_' applied to '(, string)'\n | params.all(k, v, v != '')\n | ...................^", false},
		{"{'a': 'b'}.all(k, v, v != '')",
			"", false},
		{"['a'].all(i, v, v != '')",
			"", false},
		{"object.metadata.labels.map(k, object.metadata.labels.all(a, b, b == 'x')).size() > 0",
			"compilation failed: ERROR: <input>:1:66: found no matching overload for '_==_' applied to '(, string)'\n | object.metadata.labels.map(k, object.metadata.labels.all(a, b, b == 'x')).size() > 0\n | .................................................................^", false},
	}
	env132, err := celenv.New(celenv.Options{Version: celenv.Version1_32})
	if err != nil {
		t.Fatal(err)
	}
	env133, err := celenv.New(celenv.Options{Version: celenv.Version1_33})
	if err != nil {
		t.Fatal(err)
	}
	compile := func(env *celenv.Env, expr string) *celenv.Program {
		return env.NewScope(celenv.ScopeOptions{Params: true}).Compile(expr, celenv.Decls{Authorizer: true}, cel.BoolType)
	}
	for _, tc := range tests {
		p := compile(env132, tc.expr)
		switch err := p.Err(); {
		case tc.detail == "" && err != nil:
			t.Errorf("1.32: %s: %q, want no error", tc.expr, err.Detail)
		case tc.detail == "":
		case err == nil:
			t.Errorf("1.32: %s compiles, want %q", tc.expr, tc.detail)
		case err.Detail != tc.detail || err.Internal() != tc.internal:
			t.Errorf("1.32: %s:\n got %q (internal %v)\nwant %q (internal %v)", tc.expr, err.Detail, err.Internal(), tc.detail, tc.internal)
		}
	}
	// cel-go v0.23.2, 1.33's, types the variable dyn, as vapkit's does.
	for _, expr := range []string{
		"object.metadata.labels.all(k, v, k.startsWith('app') || v != '')",
		"object.metadata.labels.all(k, v, v.x == 1)",
		"object.metadata.labels.transformList(k, v, v).size() > 0",
	} {
		if err := compile(env133, expr).Err(); err != nil {
			t.Errorf("1.33: %s: %q, want no error", expr, err.Detail)
		}
	}
}

// TestDriftTwoVarComprehensions132Evaluates: at 1.32 an expression whose
// untyped variable is unused compiles and evaluates as in every version.
func TestDriftTwoVarComprehensions132Evaluates(t *testing.T) {
	env, err := celenv.New(celenv.Options{Version: celenv.Version1_32})
	if err != nil {
		t.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile("object.metadata.labels.all(k, v, k.startsWith('app'))", celenv.Decls{}, cel.BoolType)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	in := &celenv.Input{Object: map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x", "other": "y"}}}}
	res, err := scope.NewBatch(t.Context(), nil, in, 10_000_000).Eval(p)
	if err != nil || res.Err != nil || res.Value.Value() != false {
		t.Errorf("Eval = %v, %v, %v; want false", res.Value, res.Err, err)
	}
}

// FuzzTwoVarComprehensions132 compiles expressions at 1.32, which must
// never panic; what 1.32 compiles (its check of two-variable
// comprehensions only adds errors to v0.29.2's) 1.33 compiles too.
func FuzzTwoVarComprehensions132(f *testing.F) {
	for _, seed := range []string{
		"object.metadata.labels.all(k, v, v != '')",
		"object.a.all(k, v, v.all(k2, v2, v2.all(k3, v3, v3 == 1)))",
		"1.all(k, v, v == 1)",
		"object.metadata.labels.transformMap(k, v, v == 'a', v)",
		"[object.a].all(i, m, m.all(k, v, object.b.all(a, b, b == v)))",
		"object.metadata.labels.all(k, v, dyn(v) != '')",
		"{'a': 1}.transformMapEntry(k, v, {v: k})",
	} {
		f.Add(seed)
	}
	env132, err := celenv.New(celenv.Options{Version: celenv.Version1_32})
	if err != nil {
		f.Fatal(err)
	}
	env133, err := celenv.New(celenv.Options{Version: celenv.Version1_33})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if env132.NewScope(celenv.ScopeOptions{Params: true}).Compile(expr, celenv.Decls{Authorizer: true}).Err() != nil {
			return
		}
		if err := env133.NewScope(celenv.ScopeOptions{Params: true}).Compile(expr, celenv.Decls{Authorizer: true}).Err(); err != nil {
			t.Errorf("%q compiles at 1.32, not at 1.33: %v", expr, err.Detail)
		}
	})
}
