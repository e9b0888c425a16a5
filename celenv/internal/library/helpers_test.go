package library_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

// celCase is one self-asserting expression for the expression tables of
// this package. With no error field set, expr must compile and evaluate to
// true. At most one error field is set.
type celCase struct {
	name string
	expr string
	// compileErr must be a substring of the compile issues.
	compileErr string
	// programErr must equal the program-creation error.
	programErr string
	// optimizedProgramErr, when set, replaces programErr for the run with
	// cel.OptOptimize, where constant folding can turn a computed regex
	// pattern into a literal one.
	optimizedProgramErr string
	// evalErr must equal the evaluation error.
	evalErr string
}

// exprCase is the name the quantity, semver and format tables use for a
// celCase; they only set compileErr and evalErr.
type exprCase = celCase

// newEnv returns cel.NewEnv(opts...) or fails.
func newEnv(t testing.TB, opts ...cel.EnvOption) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(opts...)
	if err != nil {
		t.Fatalf("cel.NewEnv() = %v", err)
	}
	return env
}

// netEnv returns the environment the URL, regex, lists, IP and CIDR tables
// run in: the five libraries together, lists at version 1, as in
// Kubernetes 1.37.
func netEnv(t testing.TB) *cel.Env {
	t.Helper()
	return newEnv(t, library.URLs(), library.Regex(), library.Lists(1), library.IP(), library.CIDR())
}

// newExprEnv returns an environment with the optional types and the given
// libraries.
func newExprEnv(t testing.TB, opts ...cel.EnvOption) *cel.Env {
	t.Helper()
	return newEnv(t, append([]cel.EnvOption{cel.OptionalTypes()}, opts...)...)
}

// allLibsEnv has the quantity, semver and format libraries together, as in
// Kubernetes, so that shared function names (compareTo, ...) are exercised.
func allLibsEnv(t testing.TB) *cel.Env {
	t.Helper()
	return newExprEnv(t, library.Quantity(), library.Semver(1), library.Format())
}

// runCELCases checks every case against env, once with plain evaluation
// and once with cel.OptOptimize (constant folding at program creation), as
// the outcome must not depend on it.
func runCELCases(t *testing.T, env *cel.Env, cases []celCase) {
	t.Helper()
	runCases(t, env, cases, false, true)
}

// runExprCases checks every case against env with plain evaluation.
func runExprCases(t *testing.T, env *cel.Env, cases []exprCase) {
	t.Helper()
	runCases(t, env, cases, false)
}

// runCases runs each case as a parallel subtest, once for each of the
// optimize settings.
func runCases(t *testing.T, env *cel.Env, cases []celCase, optimize ...bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, opt := range optimize {
				checkCELCase(t, env, tc, opt)
			}
		})
	}
}

func checkCELCase(t *testing.T, env *cel.Env, tc celCase, optimize bool) {
	t.Helper()
	ast, iss := env.Compile(tc.expr)
	if tc.compileErr != "" {
		if iss.Err() == nil {
			t.Fatalf("Compile(%q) succeeded, want error containing %q", tc.expr, tc.compileErr)
		}
		if got := iss.Err().Error(); !strings.Contains(got, tc.compileErr) {
			t.Fatalf("Compile(%q) error = %q, want it to contain %q", tc.expr, got, tc.compileErr)
		}
		return
	}
	if iss.Err() != nil {
		t.Fatalf("Compile(%q) = %v", tc.expr, iss.Err())
	}
	var opts []cel.ProgramOption
	if optimize {
		opts = append(opts, cel.EvalOptions(cel.OptOptimize))
	}
	prg, err := env.Program(ast, opts...)
	wantProgramErr := tc.programErr
	if optimize && tc.optimizedProgramErr != "" {
		wantProgramErr = tc.optimizedProgramErr
	}
	if wantProgramErr != "" {
		if err == nil || err.Error() != wantProgramErr {
			t.Fatalf("Program(%q, optimize=%v) error = %v, want %q", tc.expr, optimize, err, wantProgramErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("Program(%q, optimize=%v) = %v", tc.expr, optimize, err)
	}
	out, _, err := prg.Eval(cel.NoVars())
	if tc.evalErr != "" {
		if err == nil || err.Error() != tc.evalErr {
			t.Fatalf("Eval(%q, optimize=%v) = %v, %v, want error %q", tc.expr, optimize, out, err, tc.evalErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("Eval(%q, optimize=%v) = %v", tc.expr, optimize, err)
	}
	if out != types.True {
		t.Fatalf("Eval(%q, optimize=%v) = %v, want true", tc.expr, optimize, out)
	}
}

// checkOverloadIDs asserts that each function of env has exactly the listed
// overload ids, apiserver's, which the cost estimator keys on. Functions in
// shared lists only need to contain them.
func checkOverloadIDs(t *testing.T, env *cel.Env, exact, shared map[string][]string) {
	t.Helper()
	fns := env.Functions()
	check := func(name string, ids []string, onlyThese bool) {
		fn, ok := fns[name]
		if !ok {
			t.Errorf("Functions()[%q] is missing", name)
			return
		}
		got := map[string]bool{}
		for _, o := range fn.OverloadDecls() {
			got[o.ID()] = true
		}
		for _, id := range ids {
			if !got[id] {
				t.Errorf("Functions()[%q] lacks overload %q; has %v", name, id, got)
			}
		}
		if onlyThese && len(got) != len(ids) {
			t.Errorf("Functions()[%q] has overloads %v, want exactly %v", name, got, ids)
		}
	}
	for name, ids := range exact {
		check(name, ids, true)
	}
	for name, ids := range shared {
		check(name, ids, false)
	}
}

// mustProgram compiles expr in env or fails.
func mustProgram(t testing.TB, env *cel.Env, expr string) cel.Program {
	t.Helper()
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("Compile(%q) = %v", expr, iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatalf("Program(%q) = %v", expr, err)
	}
	return prg
}

// evalExpr compiles and evaluates expr in env without variables.
func evalExpr(env *cel.Env, expr string) (ref.Val, error) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	prg, err := env.Program(ast)
	if err != nil {
		return nil, err
	}
	out, _, err := prg.Eval(cel.NoVars())
	return out, err
}

// printEvals prints "expr: result" for each expression, or "expr: error:
// message" where it fails; the examples use it.
func printEvals(env *cel.Env, exprs ...string) {
	for _, expr := range exprs {
		out, err := evalExpr(env, expr)
		if err != nil {
			fmt.Printf("%s: error: %v\n", expr, err)
			continue
		}
		fmt.Printf("%s: %v\n", expr, out)
	}
}

// netValueCase describes a value of the IP or CIDR type for
// checkNetValue.
type netValueCase struct {
	// v is the value under test and vStr its string form.
	v    ref.Val
	vStr string
	// native is what v converts to as nativeType.
	native     any
	nativeType reflect.Type
	// strV is the value whose string conversions are checked, str its form.
	strV ref.Val
	str  string
	// name is the short type name ("IP"), typ and typeName the CEL type.
	name     string
	typ      *types.Type
	typeName string
	// same equals v; other, described by otherName, does not.
	same, other ref.Val
	otherName   string
}

// checkNetValue runs the conversion, equality and type subtests shared by
// the IP and CIDR values.
func checkNetValue(t *testing.T, c netValueCase) {
	t.Helper()
	t.Run("ConvertToNative", func(t *testing.T) {
		t.Parallel()
		if got, err := c.v.ConvertToNative(c.nativeType); err != nil || got != c.native {
			t.Errorf("ConvertToNative(%v) = %v, %v, want %v", c.nativeType, got, err, c.native)
		}
		if got, err := c.strV.ConvertToNative(reflect.TypeFor[string]()); err != nil || got != c.str {
			t.Errorf("ConvertToNative(string) = %v, %v, want %s", got, err, c.str)
		}
		_, err := c.v.ConvertToNative(reflect.TypeFor[int]())
		if want := "type conversion error from '" + c.name + "' to 'int'"; err == nil || err.Error() != want {
			t.Errorf("ConvertToNative(int) error = %v, want %q", err, want)
		}
	})

	t.Run("ConvertToType", func(t *testing.T) {
		t.Parallel()
		if got := c.v.ConvertToType(c.typ); got != c.v {
			t.Errorf("ConvertToType(%sType) = %v, want %v", c.name, got, c.v)
		}
		if got := c.v.ConvertToType(types.TypeType); got != c.typ {
			t.Errorf("ConvertToType(TypeType) = %v, want %v", got, c.typ)
		}
		if got := c.strV.ConvertToType(types.StringType); got != types.String(c.str) {
			t.Errorf("ConvertToType(StringType) = %v, want %s", got, c.str)
		}
		got := c.v.ConvertToType(types.IntType)
		if err, ok := got.(*types.Err); !ok || err.Error() != "type conversion error from '"+c.typeName+"' to 'int'" {
			t.Errorf("ConvertToType(IntType) = %v, want type conversion error", got)
		}
	})

	t.Run("Equal", func(t *testing.T) {
		t.Parallel()
		if got := c.v.Equal(c.same); got != types.True {
			t.Errorf("Equal(same) = %v, want true", got)
		}
		if got := c.v.Equal(c.other); got != types.False {
			t.Errorf("Equal(%s) = %v, want false", c.otherName, got)
		}
		if got := c.v.Equal(types.String(c.vStr)); !types.IsError(got) {
			t.Errorf("Equal(string) = %v, want an error value", got)
		}
	})

	t.Run("TypeAndValue", func(t *testing.T) {
		t.Parallel()
		if got := c.v.Type(); got != c.typ || got.TypeName() != c.typeName {
			t.Errorf("Type() = %v, want %s", got, c.typeName)
		}
		if got := c.v.Value(); got != c.native {
			t.Errorf("Value() = %v, want %v", got, c.native)
		}
	})
}
