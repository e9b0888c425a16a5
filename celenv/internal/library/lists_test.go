package library_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

func TestLists(t *testing.T) {
	t.Parallel()
	runCELCases(t, netEnv(t), []celCase{
		// isSorted
		{name: "isSorted ints", expr: "[1, 2, 3].isSorted() && [1, 1].isSorted() && ![2, 1].isSorted()"},
		{name: "isSorted strings", expr: "['a', 'b', 'b', 'c'].isSorted() && !['b', 'a'].isSorted()"},
		{name: "isSorted doubles", expr: "![2.0, 1.0].isSorted() && [-1.5, 0.0].isSorted()"},
		{name: "isSorted uints", expr: "[0u, 1u].isSorted() && ![1u, 0u].isSorted()"},
		{name: "isSorted bools", expr: "[false, true].isSorted() && ![true, false].isSorted()"},
		{name: "isSorted bytes", expr: "[b'a', b'b'].isSorted() && ![b'b', b'a'].isSorted()"},
		{name: "isSorted durations", expr: "[duration('1s'), duration('1m')].isSorted()"},
		{name: "isSorted timestamps",
			expr: "![timestamp('2020-01-01T00:00:00Z'), timestamp('2019-01-01T00:00:00Z')].isSorted()"},
		{name: "isSorted trivial", expr: "[].isSorted() && [1].isSorted()"},
		{name: "isSorted mixed dyn ignores incomparable", expr: "[1, 'a'].isSorted() && ['a', 1].isSorted()"},
		{name: "isSorted lists", expr: "[[1], [2]].isSorted()", compileErr: "found no matching overload for 'isSorted'"},

		// sum
		{name: "sum int", expr: "[1, 3].sum() == 4"},
		{name: "sum uint", expr: "[1u, 3u].sum() == 4u"},
		{name: "sum double", expr: "[1.0, 3.5].sum() == 4.5"},
		{name: "sum duration", expr: "[duration('1m'), duration('1s')].sum() == duration('1m1s')"},
		{name: "sum empty literal is int zero", expr: "[].sum() == 0 && type([].sum()) == int"},
		{name: "sum empty dyn is int zero", expr: "dyn([]).sum() == 0 && type(dyn([]).sum()) == int"},
		{name: "sum empty int", expr: "type([1].filter(x, false).sum()) == int"},
		{name: "sum empty uint", expr: "[1u].filter(x, false).sum() == 0u && type([1u].filter(x, false).sum()) == uint"},
		{name: "sum empty double",
			expr: "[1.0].filter(x, false).sum() == 0.0 && type([1.0].filter(x, false).sum()) == double"},
		{name: "sum empty duration", expr: "[duration('1s')].filter(x, false).sum() == duration('0s')"},
		{name: "sum dyn doubles", expr: "dyn([1.5, 2.5]).sum() == 4.0"},
		{name: "sum int overflow", expr: "[9223372036854775807, 1].sum() == 0", evalErr: "integer overflow"},
		{name: "sum uint overflow", expr: "[18446744073709551615u, 1u].sum() == 0u",
			evalErr: "unsigned integer overflow"},
		{name: "sum mixed dyn", expr: "[1, 2.0].sum() == 3.0", evalErr: "no such overload"},
		{name: "sum strings", expr: "['a'].sum() == 'a'", compileErr: "found no matching overload for 'sum'"},
		{name: "sum dyn strings", expr: "dyn(['a']).sum() == 'a'", evalErr: "no such overload: sum(list)"},

		// min and max
		{name: "min max int", expr: "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3"},
		{name: "min max single", expr: "[7].min() == 7 && [7].max() == 7"},
		{name: "min max string", expr: "['b', 'a', 'c'].min() == 'a' && ['b', 'a', 'c'].max() == 'c'"},
		{name: "min max double", expr: "[1.5, -2.0].min() == -2.0 && [1.5, -2.0].max() == 1.5"},
		{name: "min max uint", expr: "[2u, 1u].min() == 1u && [2u, 1u].max() == 2u"},
		{name: "min max bool", expr: "[true, false].min() == false && [false, true].max() == true"},
		{name: "min max bytes", expr: "[b'z', b'a'].min() == b'a' && [b'z', b'a'].max() == b'z'"},
		{name: "min max duration", expr: "[duration('1s'), duration('1m')].max() == duration('1m')"},
		{name: "min max timestamp", expr: "[timestamp('2020-01-01T00:00:00Z'), timestamp('2019-01-01T00:00:00Z')].min()" +
			" == timestamp('2019-01-01T00:00:00Z')"},
		{name: "max mixed numbers", expr: "[1, 2.0].max() == 2.0 && [2.0, 1].max() == 2.0"},
		{name: "min ties keep first", expr: "type([1, 1u, 1.0].min()) == int"},
		{name: "min empty", expr: "[].min() == 0", evalErr: "min called on empty list"},
		{name: "max empty", expr: "[].max() == 0", evalErr: "max called on empty list"},
		{name: "max empty dyn", expr: "dyn([]).max() == 0", evalErr: "max called on empty list"},
		{name: "min empty typed", expr: "['a'].filter(x, false).min() == ''", evalErr: "min called on empty list"},
		{name: "min lists", expr: "[[1]].min() == [1]", compileErr: "found no matching overload for 'min'"},

		// indexOf and lastIndexOf
		{name: "indexOf", expr: "[1, 2, 2, 3].indexOf(2) == 1 && [1, 2, 2, 3].lastIndexOf(2) == 2"},
		{name: "indexOf strings", expr: "['a', 'b', 'b', 'c'].lastIndexOf('b') == 2 && ['a', 'b'].indexOf('a') == 0"},
		{name: "indexOf absent", expr: "[1.0].indexOf(1.1) == -1 && [1, 2].lastIndexOf(3) == -1"},
		{name: "indexOf empty", expr: "[].indexOf('string') == -1 && [].lastIndexOf('string') == -1"},
		{name: "indexOf heterogeneous equality", expr: "[1, 2.0, 3u].indexOf(2) == 1 && [1, 2.0, 3u].indexOf(dyn(3)) == 2"},
		{name: "indexOf nested", expr: "[[1], [2]].indexOf([2]) == 1 && [{'a': 1}].lastIndexOf({'a': 1}) == 0"},
		{name: "indexOf null", expr: "[1, null].indexOf(null) == 1"},
		{name: "indexOf ip values", expr: "[ip('::1'), ip('1.2.3.4')].indexOf(ip('1.2.3.4')) == 1"},
		{name: "indexOf wrong type", expr: "['x'].indexOf(1) == -1", compileErr: "found no matching overload for 'indexOf'"},

		// includes (version 1)
		{name: "includes list", expr: "[1, 2, 3].includes(2) && ![1, 2, 3].includes(4) && ![].includes(1)"},
		{name: "includes heterogeneous", expr: "[1, 'a'].includes('a') && [1, 2].includes(2u)"},
		{name: "includes nested list", expr: "[[1, 2]].includes([1, 2])"},
		{name: "includes scalar equality", expr: "'model-a'.includes('model-a') && !'model-a'.includes('model-b')"},
		{name: "includes string is not substring", expr: "!'abc'.includes('b')"},
		{name: "includes map is not key lookup", expr: "!{'a': 1}.includes('a')"},
		{name: "includes numbers", expr: "1.includes(1.0) && !1.includes('1')"},
		{name: "includes null", expr: "null.includes(null)"},
		{name: "includes custom values", expr: "[dyn(ip('1.2.3.4')), 'x'].includes('x') && !ip('1.2.3.4').includes('1.2.3.4')"},
	})
}

func TestListsVersion0(t *testing.T) {
	t.Parallel()
	env := newEnv(t, library.Lists(0))
	runCELCases(t, env, []celCase{
		{name: "sum", expr: "[1, 2].sum() == 3"},
		{name: "includes absent", expr: "[1].includes(1)", compileErr: "undeclared reference to 'includes'"},
	})
}

// TestListsSingleton shows that only the first Lists option counts: the
// library is registered once under its apiserver name.
func TestListsSingleton(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		opts         []cel.EnvOption
		wantIncludes bool
	}{
		{name: "v0 then v1", opts: []cel.EnvOption{library.Lists(0), library.Lists(1)}, wantIncludes: false},
		{name: "v1 then v0", opts: []cel.EnvOption{library.Lists(1), library.Lists(0)}, wantIncludes: true},
		{name: "v1 twice", opts: []cel.EnvOption{library.Lists(1), library.Lists(1)}, wantIncludes: true},
		{name: "v2", opts: []cel.EnvOption{library.Lists(2)}, wantIncludes: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, err := cel.NewEnv(tc.opts...)
			if err != nil {
				t.Fatalf("cel.NewEnv() = %v", err)
			}
			if !env.HasLibrary("kubernetes.lists") {
				t.Errorf("HasLibrary(%q) = false, want true", "kubernetes.lists")
			}
			if got := env.HasFunction("includes"); got != tc.wantIncludes {
				t.Errorf("HasFunction(%q) = %v, want %v", "includes", got, tc.wantIncludes)
			}
		})
	}
}

func TestListsOverloadIDs(t *testing.T) {
	t.Parallel()
	templated := func(pattern string, elems ...string) []string {
		var ids []string
		for _, e := range elems {
			ids = append(ids, strings.ReplaceAll(pattern, "T", e))
		}
		return ids
	}
	comparable := []string{"int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes"}
	checkOverloadIDs(t, netEnv(t), map[string][]string{
		"isSorted":    templated("list_T_is_sorted_bool", comparable...),
		"sum":         templated("list_T_sum_T", "int", "uint", "double", "duration"),
		"min":         templated("list_T_min_T", comparable...),
		"max":         templated("list_T_max_T", comparable...),
		"indexOf":     {"list_a_index_of_int"},
		"lastIndexOf": {"list_a_last_index_of_int"},
		"includes":    {"list_includes_dyn_dyn"},
	}, nil)
}

func ExampleLists() {
	env, err := cel.NewEnv(library.Lists(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	printEvals(env,
		"[3, 1, 2].max()",
		"[duration('1m'), duration('30s')].sum()",
		"['a', 'b', 'a'].lastIndexOf('a')",
		"[1, 2, 3].includes(2)",
		"[].min()",
	)
	// Output:
	// [3, 1, 2].max(): 3
	// [duration('1m'), duration('30s')].sum(): 1m30s
	// ['a', 'b', 'a'].lastIndexOf('a'): 2
	// [1, 2, 3].includes(2): true
	// [].min(): error: min called on empty list
}
