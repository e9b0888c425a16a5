package celdiff

import (
	"fmt"
	"sort"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/celbridge"
)

// declarations lists the functions (one entry per overload, "name/overloadID")
// and the macros ("macro:key") an environment offers, sorted.
func declarations(env *cel.Env) []string {
	var out []string
	for name, fn := range env.Functions() {
		for _, o := range fn.OverloadDecls() {
			out = append(out, name+"/"+o.ID())
		}
	}
	for _, m := range env.Macros() {
		out = append(out, "macro:"+m.MacroKey())
	}
	sort.Strings(out)
	return out
}

// upstreamEnv returns the API server environment vapkit models for a server
// of version v in the given mode: such a server stores everything introduced
// by v and not removed by v (what a 1.37 binary offers new expressions at
// compatibility version v), and accepts new expressions at compatibility
// version v-1.
func upstreamEnv(v celenv.Version, mode celenv.Mode) *cel.Env {
	compat := uint(v)
	if mode == celenv.NewExpressions {
		compat--
	}
	return environment.MustBaseEnvSet(version.MajorMinor(1, compat)).NewExpressionsEnv()
}

func vapkitEnv(t *testing.T, v celenv.Version, mode celenv.Mode) *cel.Env {
	t.Helper()
	e, err := celenv.New(celenv.Options{Version: v})
	if err != nil {
		t.Fatalf("celenv.New(%s) error: %v", v, err)
	}
	return celbridge.Env(e, mode == celenv.NewExpressions, true, true)
}

func modeName(m celenv.Mode) string {
	if m == celenv.NewExpressions {
		return "NewExpressions"
	}
	return "StoredExpressions"
}

func TestDeclarationsMatchUpstream(t *testing.T) {
	for v := celenv.MinVersion; v <= celenv.MaxVersion; v++ {
		for _, mode := range []celenv.Mode{celenv.StoredExpressions, celenv.NewExpressions} {
			t.Run(fmt.Sprintf("%s/%s", v, modeName(mode)), func(t *testing.T) {
				got := declarations(vapkitEnv(t, v, mode))
				want := declarations(upstreamEnv(v, mode))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("declarations differ from upstream (-upstream +vapkit):\n%s", diff)
				}
			})
		}
	}
}

// TestStoredMatchesUpstreamBinary checks that vapkit's 1.37 stored
// environment is the stored environment of a 1.37 API server, whatever
// compatibility version it runs at, and that its new-expressions environment
// is the one of the server's default compatibility version.
func TestStoredMatchesUpstreamBinary(t *testing.T) {
	got := declarations(vapkitEnv(t, celenv.Version1_37, celenv.StoredExpressions))
	for _, compat := range []uint{30, 36, 37} {
		want := declarations(environment.MustBaseEnvSet(version.MajorMinor(1, compat)).StoredExpressionsEnv())
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("1.37 stored declarations differ from upstream StoredExpressionsEnv at compat 1.%d (-upstream +vapkit):\n%s", compat, diff)
		}
	}
	def := environment.DefaultCompatibilityVersion()
	gotNew := declarations(vapkitEnv(t, celenv.Version1_37, celenv.NewExpressions))
	wantNew := declarations(environment.MustBaseEnvSet(def).NewExpressionsEnv())
	if diff := cmp.Diff(wantNew, gotNew); diff != "" {
		t.Errorf("1.37 new-expression declarations differ from upstream at default compatibility %s (-upstream +vapkit):\n%s", def, diff)
	}
}

// TestDeclarationCounts pins the number of overloads plus macros the
// reference specification gives for some compatibility versions.
func TestDeclarationCounts(t *testing.T) {
	tests := []struct {
		compat uint
		want   int
	}{
		{34, 364},
		{37, 365},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("1.%d", tc.compat), func(t *testing.T) {
			got := len(declarations(environment.MustBaseEnvSet(version.MajorMinor(1, tc.compat)).NewExpressionsEnv()))
			if got != tc.want {
				t.Errorf("upstream NewExpressions@1.%d declarations = %d, want %d", tc.compat, got, tc.want)
			}
		})
	}
	for v := celenv.MinVersion; v <= celenv.MaxVersion; v++ {
		t.Logf("%s: stored %d, new %d", v, len(declarations(vapkitEnv(t, v, celenv.StoredExpressions))), len(declarations(vapkitEnv(t, v, celenv.NewExpressions))))
	}
}
