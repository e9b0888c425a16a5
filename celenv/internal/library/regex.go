package library

import (
	"regexp"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
)

// Regex returns the Kubernetes regular-expression library, apiserver's
// "kubernetes.regex" (available since Kubernetes 1.0 of the CEL
// environment). It declares:
//
//	<string>.find(pattern string) string             // first match, or ""
//	<string>.findAll(pattern string) list(string)    // all non-overlapping matches
//	<string>.findAll(pattern string, n int) list(string) // at most n matches when n >= 0
//
// Patterns use Go's RE2 syntax ([regexp]). A pattern that is a string
// literal is compiled once when the program is created, and an invalid one
// makes program creation fail with the [regexp.Compile] error. A pattern
// computed at run time is compiled on every call, and an invalid one
// evaluates to the error "Illegal regex: <regexp error>". Examples:
//
//	'abc 123'.find('[0-9]+') == '123'
//	'123 abc 456'.findAll('[0-9]+', 1) == ['123']
func Regex() cel.EnvOption {
	return cel.Lib(regexLib{})
}

// regexLib is the cel.SingletonLibrary behind [Regex].
type regexLib struct{}

// LibraryName returns apiserver's name for the library.
func (regexLib) LibraryName() string { return "kubernetes.regex" }

// CompileOptions declares find and findAll.
func (regexLib) CompileOptions() []cel.EnvOption {
	strStr := []*cel.Type{cel.StringType, cel.StringType}
	return []cel.EnvOption{
		cel.Function("find",
			cel.MemberOverload("string_find_string", strStr, cel.StringType, cel.BinaryBinding(regexFind))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", strStr, cel.ListType(cel.StringType),
				cel.BinaryBinding(func(s, re ref.Val) ref.Val { return regexFindAll(s, re) })),
			cel.MemberOverload("string_find_all_string_int",
				[]*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType),
				cel.FunctionBinding(regexFindAll))),
	}
}

// ProgramOptions installs the constant-pattern optimizations for find and
// findAll, as apiserver does with its FindRegexOptimization and
// FindAllRegexOptimization.
func (regexLib) ProgramOptions() []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.OptimizeRegex(
			&interpreter.RegexOptimization{Function: "find", RegexIndex: 1, Factory: precompiled(findWith)},
			&interpreter.RegexOptimization{Function: "findAll", RegexIndex: 1, Factory: precompiled(findAllWith)},
		),
	}
}

// precompiled returns a RegexOptimization factory that compiles the constant
// pattern once and replaces the call's implementation with run, which then
// ignores the pattern argument. A compile error aborts program creation.
func precompiled(run func(re *regexp.Regexp, args []ref.Val) ref.Val) func(interpreter.InterpretableCall, string) (interpreter.InterpretableCall, error) {
	return func(call interpreter.InterpretableCall, pattern string) (interpreter.InterpretableCall, error) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, err
		}
		impl := func(args ...ref.Val) ref.Val { return run(re, args) }
		return interpreter.NewCall(call.ID(), call.Function(), call.OverloadID(), call.Args(), impl), nil
	}
}

// regexFind is the run-time binding of find.
func regexFind(s, pattern ref.Val) ref.Val {
	return compileThen([]ref.Val{s, pattern}, findWith)
}

// regexFindAll is the run-time binding of both findAll overloads.
func regexFindAll(args ...ref.Val) ref.Val {
	return compileThen(args, findAllWith)
}

// compileThen compiles the pattern args[1] that arrived at run time and
// runs it, or returns the "Illegal regex" error value. Like apiserver, it
// checks the subject's type before it compiles the pattern.
func compileThen(args []ref.Val, run func(*regexp.Regexp, []ref.Val) ref.Val) ref.Val {
	if len(args) < 2 {
		return types.NoSuchOverloadErr()
	}
	if _, ok := args[0].Value().(string); !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	p, ok := args[1].Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[1])
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return types.NewErr("Illegal regex: %v", err.Error())
	}
	return run(re, args)
}

// findWith evaluates find(args[0], re); args[1] (the pattern) is ignored.
func findWith(re *regexp.Regexp, args []ref.Val) ref.Val {
	if len(args) != 2 {
		return types.NoSuchOverloadErr()
	}
	s, ok := args[0].Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	return types.String(re.FindString(s))
}

// findAllWith evaluates findAll(args[0], re[, args[2]]); args[1] (the
// pattern) is ignored. A negative limit means no limit.
func findAllWith(re *regexp.Regexp, args []ref.Val) ref.Val {
	if len(args) < 2 || len(args) > 3 {
		return types.NoSuchOverloadErr()
	}
	s, ok := args[0].Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	limit := int64(-1)
	if len(args) == 3 {
		if limit, ok = args[2].Value().(int64); !ok {
			return types.MaybeNoSuchOverloadErr(args[2])
		}
	}
	return types.NewStringList(types.DefaultTypeAdapter, re.FindAllString(s, int(limit)))
}
