package library_test

import (
	"fmt"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

func TestRegex(t *testing.T) {
	t.Parallel()
	const missingBracket = "error parsing regexp: missing closing ]: `[`"
	runCELCases(t, netEnv(t), []celCase{
		// find
		{name: "find", expr: "'abc 123'.find('[0-9]+') == '123'"},
		{name: "find empty match", expr: "'abc 123'.find('[0-9]*') == ''"},
		{name: "find no match", expr: "'abc 123'.find('xyz') == ''"},
		{name: "find flags", expr: "'abc'.find('(?i)B') == 'b'"},
		{name: "find unicode", expr: "'日本語'.find('本.') == '本語'"},
		{name: "find dyn receiver", expr: "dyn('abc').find('b') == 'b'"},

		// findAll
		{name: "findAll", expr: "'123 abc 456'.findAll('[0-9]+') == ['123', '456']"},
		{name: "findAll empty matches", expr: "'123 abc 456'.findAll('[0-9]*') == ['123', '', '', '', '', '456']"},
		{name: "findAll limit", expr: "'123 abc 456'.findAll('[0-9]+', 1) == ['123']"},
		{name: "findAll limit zero", expr: "'123 abc 456'.findAll('[0-9]+', 0) == []"},
		{name: "findAll negative limit", expr: "'123 abc 456'.findAll('[0-9]+', -5) == ['123', '456']"},
		{name: "findAll no match", expr: "'123 abc 456'.findAll('xyz') == []"},
		{name: "findAll escaped", expr: "'a.b.c'.findAll('\\\\.') == ['.', '.']"},

		// Constant patterns are compiled when the program is created.
		{name: "find invalid constant", expr: "'abc'.find('[') == ''", programErr: missingBracket},
		{name: "findAll invalid constant", expr: "'abc'.findAll('[') == []", programErr: missingBracket},
		{name: "findAll limit invalid constant", expr: "'abc'.findAll('(', 2) == []",
			programErr: "error parsing regexp: missing closing ): `(`"},

		// Computed patterns are compiled on each call.
		{name: "find computed", expr: "'aaa'.find(['a', '['][0]) == 'a'"},
		{name: "findAll computed", expr: "'aaa'.findAll(['a+', '['][0], 1) == ['aaa']"},
		{name: "find invalid computed", expr: "'abc'.find(['a', '['][1]) == ''", evalErr: "Illegal regex: " + missingBracket},
		// dyn() is a conversion, which cel.OptOptimize folds to a literal.
		{name: "find invalid dyn", expr: "'abc'.find(dyn('[')) == ''", evalErr: "Illegal regex: " + missingBracket,
			optimizedProgramErr: missingBracket},
		{name: "findAll invalid computed", expr: "'abc'.findAll(['a', '['][1]) == []",
			evalErr: "Illegal regex: " + missingBracket},
		{name: "findAll limit invalid computed", expr: "'abc'.findAll(['a', '['][1], 3) == []",
			evalErr: "Illegal regex: " + missingBracket},

		{name: "find wrong type", expr: "'abc'.find(1)", compileErr: "found no matching overload for 'find'"},
	})
}

func TestRegexOverloadIDs(t *testing.T) {
	t.Parallel()
	checkOverloadIDs(t, netEnv(t), map[string][]string{
		"find":    {"string_find_string"},
		"findAll": {"string_find_all_string", "string_find_all_string_int"},
	}, nil)
}

// TestRegexVariables runs the run-time (not precompiled) path with inputs.
func TestRegexVariables(t *testing.T) {
	t.Parallel()
	env := newEnv(t, library.Regex(), cel.Variable("s", cel.StringType), cel.Variable("re", cel.StringType))
	prg := mustProgram(t, env, "[s.find(re)] + s.findAll(re) + s.findAll(re, 1)")
	tests := []struct {
		name    string
		s, re   string
		want    []string
		wantErr string
	}{
		{name: "match", s: "a1b22", re: "[0-9]+", want: []string{"1", "1", "22", "1"}},
		{name: "no match", s: "ab", re: "[0-9]", want: []string{""}},
		{name: "invalid", s: "ab", re: "a)", wantErr: "Illegal regex: error parsing regexp: unexpected ): `a)`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := prg.Eval(map[string]any{"s": tc.s, "re": tc.re})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Eval() = %v, %v, want error %q", out, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Eval() = %v", err)
			}
			if eq := out.Equal(types.NewStringList(types.DefaultTypeAdapter, tc.want)); eq != types.True {
				t.Errorf("Eval() = %v, want %v", out, tc.want)
			}
		})
	}
}

func ExampleRegex() {
	env, err := cel.NewEnv(library.Regex())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(evalExpr(env, "'image: registry.example/app:v1.2.3'.findAll('v[0-9]+')"))

	// An invalid literal pattern is reported when the program is created.
	ast, iss := env.Compile("'abc'.find('[')")
	if iss.Err() != nil {
		fmt.Println(iss.Err())
		return
	}
	_, err = env.Program(ast)
	fmt.Println(err)
	// Output:
	// [v1] <nil>
	// error parsing regexp: missing closing ]: `[`
}
