package celenv_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
)

// TestProgramInstantiation checks that expressions which type-check but
// whose program cannot be built are rejected in every environment, with
// upstream's "program instantiation failed" and as internal errors: by a
// Scope in both modes and by a ValidationScope (what API validation
// accepts) in both modes.
func TestProgramInstantiation(t *testing.T) {
	tests := []struct {
		name, expr string
		want       string // prefix of the error; "" for none
	}{
		{name: "constant regex that does not compile", expr: "'abc'.find('[') == ''",
			want: "program instantiation failed: error parsing regexp: missing closing ]: `[`"},
		{name: "protobuf wrapper type", expr: "type(1) == google.protobuf.Int64Value",
			want: "program instantiation failed: "},
		{name: "valid regex", expr: "'abc'.find('[a-z]') == 'a'"},
		{name: "int type", expr: "type(1) == int"},
	}
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	check := func(t *testing.T, what string, err *celenv.CompileError, want string) {
		t.Helper()
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: error %q, want none", what, err.Detail)
		case want != "" && err == nil:
			t.Errorf("%s: no error, want %q", what, want)
		case want != "" && (!strings.HasPrefix(err.Detail, want) || !err.Internal()):
			t.Errorf("%s: error %q (internal %v), want an internal error starting %q", what, err.Detail, err.Internal(), want)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []celenv.Mode{celenv.StoredExpressions, celenv.NewExpressions} {
				p := env.NewScope(celenv.ScopeOptions{}).WithMode(mode).Compile(tc.expr, celenv.Decls{}, cel.BoolType)
				check(t, fmt.Sprint("Scope ", mode), p.Err(), tc.want)
				vs := env.NewScope(celenv.ScopeOptions{CheckOnly: true, NoVariables: true}).WithMode(mode)
				check(t, fmt.Sprint("check-only Scope ", mode), vs.Compile(tc.expr, celenv.Decls{Authorizer: true}, cel.BoolType).Err(), tc.want)
			}
		})
	}
}

// TestCompileErrorInternal: only environment and instantiation failures are
// internal; type errors are not.
func TestCompileErrorInternal(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	p := env.NewScope(celenv.ScopeOptions{}).WithMode(celenv.NewExpressions).Compile("1 + ''", celenv.Decls{}, cel.BoolType)
	if p.Err() == nil || p.Err().Internal() {
		t.Errorf("Compile(1 + '') error = %v, want a non-internal compile error", p.Err())
	}
	var nilErr *celenv.CompileError
	if nilErr.Internal() {
		t.Error("(*CompileError)(nil).Internal() = true")
	}
}
