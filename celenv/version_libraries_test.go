package celenv_test

import (
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
)

// TestLibrariesByVersion pins which library arrives at which version in
// both environments. A Version names the API server's binary version: the
// StoredExpressions environment of version v offers every library
// introduced at or before v (k8s.io/apiserver pkg/cel/environment/base.go
// IntroducedVersion/RemovedVersion), the NewExpressions environment only
// those of the compatibility version v-1, so each library is accepted in
// new policies one minor after it can be evaluated.
func TestLibrariesByVersion(t *testing.T) {
	probes := []struct {
		library string
		expr    string
		since   celenv.Version // first binary version whose stored env has it (0: before 1.30)
		until   celenv.Version // first version without it; 0: never removed
	}{
		{library: "kubernetes.lists v0 (isSorted)", expr: "[1, 2].isSorted()", since: 0},
		{library: "kubernetes.regex", expr: "'abc'.find('b') == 'b'", since: 0},
		{library: "kubernetes.quantity", expr: "quantity('1Gi').isGreaterThan(quantity('1G'))", since: 0},
		{library: "kubernetes.net.ip", expr: "ip('1.2.3.4').family() == 4", since: celenv.Version1_30},
		{library: "kubernetes.net.cidr", expr: "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", since: celenv.Version1_30},
		{library: "kubernetes.format", expr: "!format.dns1123Label().validate('a').hasValue()", since: celenv.Version1_31},
		{library: "kubernetes.authzSelectors", expr: "authorizer.group('').resource('pods').fieldSelector('a=b').check('get').allowed() || true", since: celenv.Version1_31},
		{library: "cel.lib.ext.comprev2 (two-variable comprehensions)", expr: "[1].all(i, v, v > i)", since: celenv.Version1_32},
		{library: "kubernetes.Semver", expr: "isSemver('1.0.0')", since: celenv.Version1_33},
		{library: "cel.lib.ext.lists v3 (sort)", expr: "[2, 1].sort() == [1, 2]", since: celenv.Version1_34},
		{library: "kubernetes.lists v1 (includes)", expr: "[1, 2].includes(1)", since: celenv.Version1_37},
	}
	for v := celenv.MinVersion; v <= celenv.MaxVersion; v++ {
		env, err := celenv.New(celenv.Options{Version: v})
		if err != nil {
			t.Fatalf("New(%v) = %v", v, err)
		}
		for _, mode := range []celenv.Mode{celenv.StoredExpressions, celenv.NewExpressions} {
			compat := v
			if mode == celenv.NewExpressions {
				compat = v - 1
			}
			for _, p := range probes {
				want := p.since <= compat && (p.until == 0 || compat < p.until)
				prog := env.NewScope(celenv.ScopeOptions{}).WithMode(mode).Compile(p.expr, celenv.Decls{Authorizer: true}, cel.BoolType)
				got := prog.Err() == nil
				if got != want {
					t.Errorf("%v %v: %s: compiles = %v (%v), want %v", v, mode, p.library, got, prog.Err(), want)
				}
				if !got && !strings.Contains(prog.Err().Detail, "compilation failed") {
					t.Errorf("%v %v: %s: error %q, want a compilation failure", v, mode, p.library, prog.Err().Detail)
				}
			}
		}
	}
}
