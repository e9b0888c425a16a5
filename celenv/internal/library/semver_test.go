package library_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/celenv/internal/library"
)

func TestSemver(t *testing.T) {
	t.Parallel()
	runExprCases(t, allLibsEnv(t), []exprCase{
		// strict parsing: error texts are blang/semver/v4's
		{name: "parse", expr: `semver("1.2.3") == semver("1.2.3")`},
		{name: "parse empty", expr: `semver("")`, evalErr: "Version string empty"},
		{name: "parse v prefix", expr: `semver("v1.0")`, evalErr: "No Major.Minor.Patch elements found"},
		{name: "parse short", expr: `semver("1.2")`, evalErr: "No Major.Minor.Patch elements found"},
		{name: "parse major chars", expr: `semver("a.0.0")`, evalErr: `Invalid character(s) found in major number "a"`},
		{name: "parse major space", expr: `semver(" 1.0.0")`, evalErr: `Invalid character(s) found in major number " 1"`},
		{name: "parse major zeros", expr: `semver("01.0.0")`, evalErr: `Major number must not contain leading zeroes "01"`},
		{name: "parse major empty", expr: `semver(".0.0")`, evalErr: `strconv.ParseUint: parsing "": invalid syntax`},
		{name: "parse major overflow", expr: `semver("18446744073709551616.0.0")`, evalErr: `strconv.ParseUint: parsing "18446744073709551616": value out of range`},
		{name: "parse minor chars", expr: `semver("1.x.0")`, evalErr: `Invalid character(s) found in minor number "x"`},
		{name: "parse minor zeros", expr: `semver("1.01.0")`, evalErr: `Minor number must not contain leading zeroes "01"`},
		{name: "parse patch chars", expr: `semver("1.0.x")`, evalErr: `Invalid character(s) found in patch number "x"`},
		{name: "parse patch trailing space", expr: `semver("1.0.0 ")`, evalErr: `Invalid character(s) found in patch number "0 "`},
		{name: "parse patch dots", expr: `semver("1.0.0.0")`, evalErr: `Invalid character(s) found in patch number "0.0"`},
		{name: "parse patch zeros", expr: `semver("1.0.00")`, evalErr: `Patch number must not contain leading zeroes "00"`},
		{name: "parse patch empty", expr: `semver("1.0.-a")`, evalErr: `strconv.ParseUint: parsing "": invalid syntax`},
		{name: "parse prerelease empty", expr: `semver("1.0.0-")`, evalErr: "Prerelease is empty"},
		{name: "parse prerelease empty part", expr: `semver("1.0.0-a..b")`, evalErr: "Prerelease is empty"},
		{name: "parse prerelease zeros", expr: `semver("1.0.0-01")`, evalErr: `Numeric PreRelease version must not contain leading zeroes "01"`},
		{name: "parse prerelease chars", expr: `semver("1.0.0-a_b")`, evalErr: `Invalid character(s) found in prerelease "a_b"`},
		{name: "parse prerelease overflow", expr: `semver("1.0.0-18446744073709551616")`, evalErr: `strconv.ParseUint: parsing "18446744073709551616": value out of range`},
		{name: "parse build empty", expr: `semver("1.0.0+")`, evalErr: "Build meta data is empty"},
		{name: "parse build chars", expr: `semver("1.0.0+a_b")`, evalErr: `Invalid character(s) found in build meta data "a_b"`},
		{name: "parse prerelease before build", expr: `semver("1.0.0-_+_")`, evalErr: `Invalid character(s) found in prerelease "_"`},
		{name: "parse unicode", expr: `semver("1.0.0-é")`, evalErr: `Invalid character(s) found in prerelease "é"`},
		{name: "parse dash in build", expr: `semver("1.0.0+a-b") == semver("1.0.0")`},
		{name: "parse build leading zero", expr: `isSemver("1.0.0+001")`},
		{name: "parse alnum leading zero", expr: `isSemver("1.0.0-0a")`},
		{name: "parse max", expr: `semver("18446744073709551615.0.0").major() == -1`},

		// isSemver
		{name: "isSemver full", expr: `isSemver("1.2.3-beta.1+build.1")`},
		{name: "isSemver empty", expr: `!isSemver("")`},
		{name: "isSemver v prefix", expr: `!isSemver("v1.0.0")`},
		{name: "isSemver leading space", expr: `!isSemver(" 1.0.0")`},
		{name: "isSemver inner space", expr: `!isSemver("1. 0.0")`},
		{name: "isSemver trailing space", expr: `!isSemver("1.0.0 ")`},
		{name: "isSemver leading zeros", expr: `!isSemver("01.01.01")`},
		{name: "isSemver major only", expr: `!isSemver("1")`},
		{name: "isSemver major minor", expr: `!isSemver("1.1")`},
		{name: "isSemver no overload", expr: `isSemver([1, 2, 3])`, compileErr: "found no matching overload for 'isSemver' applied to"},
		{name: "isSemver normalize false", expr: `!isSemver("v1.0.0", false)`},

		// normalization (version 1); a part of two or more characters that
		// does not start with a digit once its zeros are stripped gets a "0"
		// prefix, which shows in the error texts
		{name: "isSemver normalize empty", expr: `!isSemver("", true)`},
		{name: "isSemver normalize leading space", expr: `!isSemver(" 1.0.0", true)`},
		{name: "isSemver normalize inner space", expr: `!isSemver("1. 0.0", true)`},
		{name: "isSemver normalize trailing space", expr: `!isSemver("1.0.0 ", true)`},
		{name: "isSemver normalize v prefix", expr: `isSemver("v1.0.0", true)`},
		{name: "isSemver normalize leading zeros", expr: `isSemver("01.01.01", true)`},
		{name: "isSemver normalize major only", expr: `isSemver("1", true)`},
		{name: "isSemver normalize major minor", expr: `isSemver("1.1", true)`},
		{name: "normalize v and zeros", expr: `semver("v01.01", true) == semver("1.1.0")`},
		{name: "normalize major", expr: `semver("1", true) == semver("1.0.0")`},
		{name: "normalize zeros", expr: `semver("01.01.01", true) == semver("1.1.1")`},
		{name: "normalize all zeros", expr: `semver("00.000.0000", true) == semver("0.0.0")`},
		{name: "normalize patch zeros with prerelease", expr: `semver("1.2.00-rc", true).compareTo(semver("1.2.0-rc")) == 0`},
		{name: "normalize keeps prerelease", expr: `semver("v1.2.3-rc.1+b", true).isLessThan(semver("1.2.3"))`},
		{name: "normalize one v only", expr: `semver("vv1.0.0", true)`, evalErr: `Invalid character(s) found in major number "0v1"`},
		{name: "normalize upper V", expr: `semver("V1.0.0", true)`, evalErr: `Invalid character(s) found in major number "0V1"`},
		{name: "normalize short prerelease", expr: `semver("1.0-beta", true)`, evalErr: "short version cannot contain PreRelease/Build meta data"},
		{name: "normalize short build", expr: `semver("1+b", true)`, evalErr: "short version cannot contain PreRelease/Build meta data"},
		{name: "normalize empty", expr: `semver("", true)`, evalErr: `strconv.ParseUint: parsing "": invalid syntax`},
		{name: "normalize numeric prerelease zeros", expr: `semver("1.0.0-01", true)`, evalErr: `Numeric PreRelease version must not contain leading zeroes "01"`},
		{name: "normalize no space trim", expr: `semver(" 1.0.0", true)`, evalErr: `Invalid character(s) found in major number "0 1"`},

		// equality and ordering
		{name: "equal reflexive", expr: `semver("1.2.3") == semver("1.2.3")`},
		{name: "not equal", expr: `semver("1.2.3") != semver("1.0.0")`},
		{name: "equal ignores build", expr: `semver("1.0.0+a") == semver("1.0.0+b")`},
		{name: "compare ignores build", expr: `semver("1.0.0-a+b").compareTo(semver("1.0.0-a")) == 0`},
		{name: "less", expr: `semver("1.0.0").isLessThan(semver("1.2.3"))`},
		{name: "less false", expr: `!semver("1.0.0").isLessThan(semver("1.0.0"))`},
		{name: "greater", expr: `semver("1.2.3").isGreaterThan(semver("1.0.0"))`},
		{name: "greater false", expr: `!semver("1.0.0").isGreaterThan(semver("1.0.0"))`},
		{name: "compare equal", expr: `semver("1.2.3").compareTo(semver("1.2.3")) == 0`},
		{name: "compare less", expr: `semver("1.0.0").compareTo(semver("1.2.3")) == -1`},
		{name: "compare greater", expr: `semver("1.2.3").compareTo(semver("0.1.2")) == 1`},
		{name: "compare numerically", expr: `semver("1.10.0").isGreaterThan(semver("1.9.0"))`},
		{name: "major decides", expr: `semver("2.0.0").isGreaterThan(semver("1.99.99"))`},
		{name: "patch decides", expr: `semver("1.1.2").isGreaterThan(semver("1.1.1"))`},
		{name: "prerelease below release", expr: `semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))`},
		{name: "release above prerelease", expr: `semver("1.0.0").compareTo(semver("1.0.0-rc.1")) == 1`},
		{name: "alpha then alpha.1", expr: `semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1"))`},
		{name: "alpha.1 then alpha.beta", expr: `semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))`},
		{name: "alpha.beta then beta", expr: `semver("1.0.0-alpha.beta").isLessThan(semver("1.0.0-beta"))`},
		{name: "beta then beta.2", expr: `semver("1.0.0-beta").isLessThan(semver("1.0.0-beta.2"))`},
		{name: "beta.2 then beta.11", expr: `semver("1.0.0-beta.2").isLessThan(semver("1.0.0-beta.11"))`},
		{name: "beta.11 then rc.1", expr: `semver("1.0.0-beta.11").isLessThan(semver("1.0.0-rc.1"))`},
		{name: "numeric below alphanumeric", expr: `semver("1.0.0-9").isLessThan(semver("1.0.0-a"))`},
		{name: "alphanumeric bytewise", expr: `semver("1.0.0-B").isLessThan(semver("1.0.0-a"))`},
		{name: "dynamic dispatch", expr: `dyn(semver("1.0.0")).compareTo(semver("2.0.0")) == -1`},

		// accessors
		{name: "major", expr: `semver("1.2.3").major() == 1`},
		{name: "minor", expr: `semver("1.2.3").minor() == 2`},
		{name: "patch", expr: `semver("1.2.3-rc+b").patch() == 3`},
	})
}

func TestSemverVersion0(t *testing.T) {
	t.Parallel()
	runExprCases(t, newExprEnv(t, library.Semver(0)), []exprCase{
		{name: "parse", expr: `semver("1.2.3").minor() == 2`},
		{name: "no normalize semver", expr: `semver("v1.0", true)`, compileErr: "found no matching overload for 'semver' applied to '(string, bool)'"},
		{name: "no normalize isSemver", expr: `isSemver("v1.0", true)`, compileErr: "found no matching overload for 'isSemver' applied to '(string, bool)'"},
	})
	// The library is a singleton: the first version applied wins.
	runExprCases(t, newExprEnv(t, library.Semver(0), library.Semver(1)), []exprCase{
		{name: "first wins", expr: `semver("v1.0", true)`, compileErr: "found no matching overload for 'semver'"},
	})
}

func TestSemverValue(t *testing.T) {
	t.Parallel()
	env := allLibsEnv(t)
	v := evalSemver(t, env, "1.2.3-rc.1+b.2")
	if got := v.String(); got != "1.2.3-rc.1+b.2" {
		t.Errorf("String() = %q, want %q", got, "1.2.3-rc.1+b.2")
	}
	if v.Major != 1 || v.Minor != 2 || v.Patch != 3 {
		t.Errorf("Major, Minor, Patch = %d, %d, %d, want 1, 2, 3", v.Major, v.Minor, v.Patch)
	}
	if got := v.Type().TypeName(); got != "kubernetes.Semver" {
		t.Errorf("Type().TypeName() = %q, want kubernetes.Semver", got)
	}
	if got := v.ConvertToType(types.TypeType); got != library.SemverType {
		t.Errorf("ConvertToType(TypeType) = %v, want %v", got, library.SemverType)
	}
	if got := v.ConvertToType(types.IntType); !types.IsError(got) {
		t.Errorf("ConvertToType(IntType) = %v, want an error", got)
	}
	if s, err := v.ConvertToNative(reflect.TypeFor[string]()); err != nil || s != "1.2.3-rc.1+b.2" {
		t.Errorf("ConvertToNative(string) = %v, %v, want 1.2.3-rc.1+b.2, nil", s, err)
	}
	if _, err := v.ConvertToNative(reflect.TypeFor[int]()); err == nil {
		t.Errorf("ConvertToNative(int) succeeded, want an error")
	}
	if got := v.Equal(types.String("1.2.3")); !types.IsError(got) {
		t.Errorf("Equal(string) = %v, want an error", got)
	}
	if got := (library.SemverValue{}).String(); got != "0.0.0" {
		t.Errorf("SemverValue{}.String() = %q, want 0.0.0", got)
	}
}

// semverProgram compiles expr over a string variable s.
func semverProgram(t testing.TB, env *cel.Env, expr string) cel.Program {
	t.Helper()
	env, err := env.Extend(cel.Variable("s", cel.StringType))
	if err != nil {
		t.Fatalf("Extend() = %v", err)
	}
	return mustProgram(t, env, expr)
}

// evalSemver evaluates semver(s) and fails the test on error.
func evalSemver(t testing.TB, env *cel.Env, s string) library.SemverValue {
	t.Helper()
	out, _, err := semverProgram(t, env, "semver(s)").Eval(map[string]any{"s": s})
	if err != nil {
		t.Fatalf("semver(%q) = %v", s, err)
	}
	v, ok := out.(library.SemverValue)
	if !ok {
		t.Fatalf("semver(%q) = %T, want library.SemverValue", s, out)
	}
	return v
}

// FuzzSemverParse checks that parsing never panics, that isSemver agrees
// with semver, that a strictly valid version prints back as its input, and
// that normalization accepts every strictly valid version unchanged and
// yields only strictly valid versions.
func FuzzSemverParse(f *testing.F) {
	for _, s := range []string{
		"", "1.2.3", "0.0.0", "v1.0", "1", "1.1", "01.01.01", "v01.01",
		"1.0.0-alpha.1+build.5", "1.0.0-0a.b-c+001", "1.0.0-", "1.0.0+", "1.0.0-01",
		"18446744073709551615.0.0", "18446744073709551616.0.0", "1.0-beta", "1.2.00-rc",
		" 1.0.0", "1.0.0 ", "1.0.0-é", "1.0.0+a..b", ".", "..", "v", "0.0.0-0.0",
	} {
		f.Add(s)
	}
	env := allLibsEnv(f)
	strict := semverProgram(f, env, "semver(s)")
	strictOK := semverProgram(f, env, "isSemver(s)")
	norm := semverProgram(f, env, "semver(s, true)")
	normOK := semverProgram(f, env, "isSemver(s, true)")

	f.Fuzz(func(t *testing.T, s string) {
		in := map[string]any{"s": s}
		eval := func(p cel.Program) (any, error) {
			out, _, err := p.Eval(in)
			if err != nil {
				return nil, err
			}
			return out.Value(), nil
		}
		sv, serr := eval(strict)
		sok, err := eval(strictOK)
		if err != nil || sok != (serr == nil) {
			t.Fatalf("isSemver(%q) = %v, %v; semver error %v", s, sok, err, serr)
		}
		nv, nerr := eval(norm)
		nok, err := eval(normOK)
		if err != nil || nok != (nerr == nil) {
			t.Fatalf("isSemver(%q, true) = %v, %v; semver error %v", s, nok, err, nerr)
		}
		if serr == nil {
			v := sv.(library.SemverValue)
			if got := v.String(); got != s {
				t.Fatalf("semver(%q).String() = %q, want the input", s, got)
			}
			if nerr != nil {
				t.Fatalf("semver(%q, true) = %v, want success for a strict version", s, nerr)
			}
			if n := nv.(library.SemverValue); n.String() != s {
				t.Fatalf("semver(%q, true).String() = %q, want the input", s, n.String())
			}
		}
		if nerr == nil {
			n := nv.(library.SemverValue)
			out, _, err := strict.Eval(map[string]any{"s": n.String()})
			if err != nil {
				t.Fatalf("semver(%q) of normalized %q = %v", n.String(), s, err)
			}
			if c := out.(library.SemverValue).Compare(n); c != 0 {
				t.Fatalf("semver(%q).Compare(normalized %q) = %d, want 0", n.String(), s, c)
			}
		}
	})
}

func ExampleSemver() {
	env, err := cel.NewEnv(library.Semver(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	printEvals(env,
		`semver("1.10.0").isGreaterThan(semver("1.9.3"))`,
		`semver("1.0.0-rc.1").compareTo(semver("1.0.0"))`,
		`semver("v1.30", true).minor()`,
		`semver("v1.30")`,
	)
	// Output:
	// semver("1.10.0").isGreaterThan(semver("1.9.3")): true
	// semver("1.0.0-rc.1").compareTo(semver("1.0.0")): -1
	// semver("v1.30", true).minor(): 30
	// semver("v1.30"): error: No Major.Minor.Patch elements found
}
