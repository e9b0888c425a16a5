package celenv_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/celbridge"
)

// never marks an expression that no supported version accepts.
const never celenv.Version = 0

// TestVersionGating pins, per expression, the first version whose stored
// environment (what a server of that version evaluates) and new-expressions
// environment (what it accepts in new policies, one minor version behind)
// compile it.
func TestVersionGating(t *testing.T) {
	tests := []struct {
		name        string
		expr        string
		authz       bool
		stored, new celenv.Version
	}{
		{name: "standard", expr: "[1, 2].all(x, x > 0) && 'abc'.startsWith('a')", stored: 30, new: 30},
		{name: "url", expr: "url('https://a.b').getHost() == 'a.b'", stored: 30, new: 30},
		{name: "regex", expr: "'abc'.find('b') == 'b'", stored: 30, new: 30},
		{name: "lists v0", expr: "[1, 2].isSorted() && [1].sum() == 1 && [1].indexOf(1) == 0", stored: 30, new: 30},
		{name: "quantity", expr: "quantity('1Gi').isGreaterThan(quantity('1Mi'))", stored: 30, new: 30},
		{name: "optional", expr: "optional.of(1).orValue(2) == 1 && [1].first().hasValue()", stored: 30, new: 30},
		{name: "cross-type numeric comparison", expr: "1 < 1.5 && 2u > 1", stored: 30, new: 30},
		{name: "strings v2", expr: "'%d'.format([1]) == '1' && strings.quote('a') != '' && 'a'.upperAscii() == 'A'", stored: 30, new: 30},
		{name: "sets", expr: "sets.contains([1, 2], [1])", stored: 30, new: 30},
		{name: "authorizer", expr: "authorizer.group('apps').resource('deployments').check('get').allowed()", authz: true, stored: 30, new: 30},
		{name: "ip", expr: "ip('1.2.3.4').family() == 4", stored: 30, new: 31},
		{name: "cidr", expr: "cidr('10.0.0.0/8').containsIP('10.1.2.3')", stored: 30, new: 31},
		{name: "format", expr: "!format.dns1123Label().validate('a').hasValue()", stored: 31, new: 32},
		{name: "authorizer selectors", expr: "authorizer.group('').resource('pods').fieldSelector('a=b').check('list').allowed()", authz: true, stored: 31, new: 32},
		{name: "two-variable comprehensions", expr: "[1, 2].all(i, v, v > i)", stored: 32, new: 33},
		{name: "transformMap", expr: "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}", stored: 32, new: 33},
		{name: "semver", expr: "isSemver('1.0.0') && semver('1.2.3').major() == 1", stored: 33, new: 34},
		{name: "lists extension", expr: "lists.range(3) == [0, 1, 2] && [2, 1].sort() == [1, 2] && [1, 1].distinct() == [1]", stored: 34, new: 35},
		{name: "includes", expr: "[1, 2].includes(1)", stored: 37, new: never},
		{name: "strings v3 reverse", expr: "'abc'.reverse() == 'cba'", stored: never, new: never},
		{name: "math", expr: "math.greatest(1, 2) == 2", stored: never, new: never},
		{name: "encoders", expr: "base64.encode(b'a') == 'YQ=='", stored: never, new: never},
		{name: "bindings", expr: "cel.bind(x, 1, x == 1)", stored: never, new: never},
	}
	envs := map[celenv.Version]*celenv.Env{}
	for v := celenv.MinVersion; v <= celenv.MaxVersion; v++ {
		e, err := celenv.New(celenv.Options{Version: v})
		if err != nil {
			t.Fatalf("New(%s) error: %v", v, err)
		}
		envs[v] = e
	}
	for _, tc := range tests {
		for v := celenv.MinVersion; v <= celenv.MaxVersion; v++ {
			for _, mode := range []celenv.Mode{celenv.StoredExpressions, celenv.NewExpressions} {
				from, label := tc.stored, "stored"
				if mode == celenv.NewExpressions {
					from, label = tc.new, "new"
				}
				t.Run(fmt.Sprintf("%s/%s/%s", tc.name, v, label), func(t *testing.T) {
					p := envs[v].NewScope(celenv.ScopeOptions{}).WithMode(mode).Compile(tc.expr, celenv.Decls{Authorizer: tc.authz}, cel.BoolType)
					want := from != never && v >= from
					if got := p.Err() == nil; got != want {
						t.Errorf("Compile(%q) at %s %s: compiles = %v, want %v (error: %v)", tc.expr, v, label, got, want, p.Err())
					}
				})
			}
		}
	}
}

func TestNewUnsupportedVersion(t *testing.T) {
	for _, v := range []celenv.Version{29, 38, -1} {
		_, err := celenv.New(celenv.Options{Version: v})
		want := fmt.Sprintf("unsupported Kubernetes version %s: supported versions are 1.30 to 1.37", v)
		if err == nil || err.Error() != want {
			t.Errorf("New(%s) error = %v, want %q", v, err, want)
		}
	}
}

func TestNewDefaultVersion(t *testing.T) {
	e, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatalf("New() error: %v", err)
	}
	if got := e.Version(); got != celenv.MaxVersion {
		t.Errorf("New().Version() = %s, want %s", got, celenv.MaxVersion)
	}
}

// TestCELEnv compiles and runs an expression with the cel-go environment
// and program options the harnesses reach through celbridge, and checks
// which variables each declaration set provides.
func TestCELEnv(t *testing.T) {
	e, err := celenv.New(celenv.Options{Version: celenv.Version1_37})
	if err != nil {
		t.Fatal(err)
	}
	env := celbridge.Env(e, false, false, false)
	ast, iss := env.Compile("[1, 2, 3].includes(object.n)")
	if iss.Err() != nil {
		t.Fatalf("Compile error: %v", iss.Err())
	}
	prg, err := env.Program(ast, celbridge.ProgramOptions(e)...)
	if err != nil {
		t.Fatalf("Program error: %v", err)
	}
	out, det, err := prg.Eval(map[string]any{"object": map[string]any{"n": int64(2)}})
	if err != nil || out.Value() != true {
		t.Fatalf("Eval = %v, %v; want true", out, err)
	}
	if det == nil || det.ActualCost() == nil || *det.ActualCost() != 5 {
		t.Errorf("Eval cost = %v, want 5", det)
	}

	tests := []struct {
		params, authorizer bool
		expr               string
		wantErr            string
	}{
		{expr: "params", wantErr: "undeclared reference to 'params'"},
		{params: true, expr: "params"},
		{expr: "authorizer", wantErr: "undeclared reference to 'authorizer'"},
		{authorizer: true, expr: "authorizer.requestResource.check('get')"},
		{expr: "request.userInfo.username + namespaceObject.metadata.name"},
		{expr: "variables"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/%v/%s", tc.params, tc.authorizer, tc.expr), func(t *testing.T) {
			_, iss := celbridge.Env(e, true, tc.params, tc.authorizer).Compile(tc.expr)
			var got string
			if iss.Err() != nil {
				got = iss.Err().Error()
			}
			if tc.wantErr == "" && got != "" || !strings.Contains(got, tc.wantErr) {
				t.Errorf("Compile(%q) error = %q, want containing %q", tc.expr, got, tc.wantErr)
			}
		})
	}
}

// TestCompileErrorText pins the API server's text for an expression that
// uses a function the chosen version does not offer yet.
func TestCompileErrorText(t *testing.T) {
	e, err := celenv.New(celenv.Options{Version: celenv.Version1_33})
	if err != nil {
		t.Fatal(err)
	}
	p := e.NewScope(celenv.ScopeOptions{}).WithMode(celenv.NewExpressions).Compile("isSemver('1.0.0')", celenv.Decls{}, cel.BoolType)
	want := "compilation failed: ERROR: <input>:1:9: undeclared reference to 'isSemver' (in container '')\n | isSemver('1.0.0')\n | ........^"
	if p.Err() == nil || p.Err().Detail != want {
		t.Errorf("Compile(isSemver) error = %v, want %q", p.Err(), want)
	}
	ok := e.NewScope(celenv.ScopeOptions{}).Compile("isSemver('1.0.0')", celenv.Decls{}, cel.BoolType)
	if ok.Err() != nil {
		t.Errorf("stored Compile(isSemver) = %v; want nil", ok.Err())
	}
}
