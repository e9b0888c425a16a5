package celenv

import (
	"slices"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
)

// The 1.32 API server is built with cel-go v0.22.0, whose type checker
// declares the second variable of a two-variable comprehension (the value
// of all(k, v, ...), transformList(i, v, ...) and the other macros of
// ext.TwoVarComprehensions) with no type at all when the range is not a
// list or a map: a dyn, error or type-parameter range, such as
// object.metadata.labels, and a range that is no collection
// (checker/checker.go, checkComprehension, at v0.22.0). cel-go v0.23.2,
// 1.33's, types it dyn or error, as v0.29.2, vapkit's, does. The missing type
// prints as '' and is assignable to nothing but dyn and type parameters,
// so most uses of the variable fail to check ("found no matching overload
// for '_!=_' applied to '(, string)'", "type '' does not support field
// selection"), and an expression whose check succeeds with it fails when
// the API server's compiler converts the checked expression to its proto
// form, which has no conversion for it ("unexpected compilation error:
// missing type conversion to proto: ",
// k8s.io/apiserver@v0.32.13 pkg/admission/plugin/cel/compile.go,
// CompileCELExpression, cel.AstToCheckedExpr).
//
// v0.29.2's checker does the same with the untyped variable as v0.22.0's
// (checker/types.go and checker/format.go are the same file in both): it
// only never declares one. check132 makes it: each such comprehension's
// range R becomes a call whose result is a map with a dyn key and an
// untyped value, so that the checker declares the first variable dyn and
// the second untyped, as v0.22.0 does for a dyn range. A range that is
// no collection is first made the range of a one-variable comprehension,
// whose check reports it ("expression of type 'int' cannot be range of a
// comprehension ..."), and the call then types the first variable error
// and the second untyped. Whether a range is a collection depends on the
// types of the enclosing comprehensions' variables, so the rewrite is
// repeated from the outermost comprehension inwards until it no longer
// changes.

// Names of the functions that wrap the rewritten ranges. cel-go's parser
// never produces a name starting with '@', so no expression can call them.
const (
	untypedValuesFunction = "@vapkit.untypedValues"
	noRangeFunction       = "@vapkit.noRange"
	// noRangeVar and noRangeAccu are the variables of the one-variable
	// comprehension that reports a range which is no collection.
	noRangeVar  = "@vapkit.it"
	noRangeAccu = "@vapkit.accu"
)

// rangeRewrite says how check132 rewrites the range of one two-variable
// comprehension.
type rangeRewrite int

const (
	// keepRange: a list or a map, typed as v0.22.0 types it.
	keepRange rangeRewrite = iota
	// untypedValues: a dyn, error or type-parameter range.
	untypedValues
	// noRange: a range that is no collection.
	noRange
)

// classifyRange returns the rewrite a range of type t needs.
func classifyRange(t *types.Type) rangeRewrite {
	switch t.Kind() {
	case types.ListKind, types.MapKind:
		return keepRange
	case types.DynKind, types.ErrorKind, types.TypeParamKind:
		return untypedValues
	}
	return noRange
}

// env132 is an environment extended with the wrapping functions, and the
// checker environment check132 reads range types from.
type env132 struct {
	env     *cel.Env
	checker *checker.Env
}

// newEnv132 extends env with the wrapping functions. The checker
// environment holds env's declarations as cel.Env.Check's does; env's
// CrossTypeNumericComparisons (on in every version) only decides which
// comparisons check, never a range's type.
func newEnv132(env *cel.Env) (*env132, error) {
	ext, err := env.Extend(
		cel.Function(untypedValuesFunction, cel.Overload(untypedValuesFunction,
			[]*cel.Type{cel.DynType}, cel.MapType(cel.DynType, nil))),
		cel.Function(noRangeFunction, cel.Overload(noRangeFunction,
			[]*cel.Type{cel.DynType}, cel.MapType(types.ErrorType, nil))),
	)
	if err != nil {
		return nil, err
	}
	chk, err := checker.NewEnv(ext.Container, ext.CELTypeProvider(), checker.CrossTypeNumericComparisons(true))
	if err != nil {
		return nil, err
	}
	if err := chk.AddIdents(ext.Variables()...); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ext.Functions()))
	for name := range ext.Functions() {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if fn := ext.Functions()[name]; !fn.IsDeclarationDisabled() {
			if err := chk.AddFunctions(fn); err != nil {
				return nil, err
			}
		}
	}
	return &env132{env: ext, checker: chk}, nil
}

// result132 is what the 1.32 API server's compiler makes of an expression
// holding a two-variable comprehension.
type result132 struct {
	// issues are the check's errors, nil when it succeeds.
	issues *cel.Issues
	// out is the output type of a successful check.
	out *cel.Type
	// protoErr is the error converting the checked expression to its
	// proto form, when a type in it has no proto form.
	protoErr error
}

// check132 checks expression as the 1.32 API server does in env (see the
// comment at the top of this file); checked is v0.29.2's check of it, nil
// when that failed. It returns nil when the expression does not parse or
// holds no two-variable comprehension: then v0.29.2's check is v0.22.0's.
func (s *Scope) check132(env *cel.Env, expression string, checked *cel.Ast) (*result132, error) {
	if checked == nil {
		parsed, iss := env.Parse(expression)
		if iss.Err() != nil {
			return nil, nil
		}
		checked = parsed
	}
	comprehensions := len(twoVarRanges(checked.NativeRep().Expr()))
	if comprehensions == 0 {
		return nil, nil
	}
	e, err := s.checkEnv132(env)
	if err != nil {
		return nil, err
	}
	// Decide each range's rewrite from its type in the previous round's
	// check, which is v0.22.0's for the ranges whose enclosing
	// comprehensions were decided in the rounds before; each round decides
	// at least one more level of nesting.
	rewrites := map[int64]rangeRewrite{}
	for round := 0; round <= comprehensions; round++ {
		a, err := e.rewrite(env, expression, rewrites)
		if err != nil {
			return nil, err
		}
		typed, _ := checker.Check(a.NativeRep(), a.Source(), e.checker)
		changed := false
		for id, rangeID := range twoVarRanges(typed.Expr()) {
			t, ok := typed.TypeMap()[rangeID]
			if !ok {
				continue
			}
			if r := classifyRange(t); r != rewrites[id] {
				rewrites[id] = r
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	a, err := e.rewrite(env, expression, rewrites)
	if err != nil {
		return nil, err
	}
	wrappers := wrapperIDs(a.NativeRep().Expr())
	checked, iss := e.env.Check(a)
	if iss.Err() != nil {
		return &result132{issues: iss}, nil
	}
	r := &result132{out: checked.OutputType()}
	// cel.AstToCheckedExpr converts every type of the type map, the
	// wrapping calls' aside (v0.22.0's ranges are typed as written).
	tm := checked.NativeRep().TypeMap()
	ids := make([]int64, 0, len(tm))
	for id := range tm {
		if !wrappers[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := types.TypeToExprType(tm[id]); err != nil {
			r.protoErr = err
			break
		}
	}
	return r, nil
}

// checkEnv132 returns env extended for check132, built once per
// environment of the scope.
func (s *Scope) checkEnv132(env *cel.Env) (*env132, error) {
	if e, ok := s.envs132[env]; ok {
		return e, nil
	}
	e, err := newEnv132(env)
	if err != nil {
		return nil, err
	}
	if s.envs132 == nil {
		s.envs132 = map[*cel.Env]*env132{}
	}
	s.envs132[env] = e
	return e, nil
}

// twoVarRanges maps the id of each two-variable comprehension of e to the
// id of its range as written (inside the wrapping of an earlier rewrite).
func twoVarRanges(e celast.Expr) map[int64]int64 {
	out := map[int64]int64{}
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.ComprehensionKind || !e.AsComprehension().HasIterVar2() {
			return
		}
		r := e.AsComprehension().IterRange()
		if r.Kind() == celast.CallKind {
			switch c := r.AsCall(); c.FunctionName() {
			case untypedValuesFunction:
				r = c.Args()[0]
			case noRangeFunction:
				r = c.Args()[0].AsComprehension().IterRange()
			}
		}
		out[e.ID()] = r.ID()
	}))
	return out
}

// wrapperIDs returns the ids of the nodes a rewrite added.
func wrapperIDs(e celast.Expr) map[int64]bool {
	out := map[int64]bool{}
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind {
			return
		}
		switch c := e.AsCall(); c.FunctionName() {
		case untypedValuesFunction:
			out[e.ID()] = true
		case noRangeFunction:
			report := c.Args()[0].AsComprehension()
			for _, n := range []celast.Expr{e, c.Args()[0], report.AccuInit(), report.LoopCondition(), report.LoopStep(), report.Result()} {
				out[n.ID()] = true
			}
		}
	}))
	return out
}

// rewrite parses expression again and wraps the ranges of its two-variable
// comprehensions as rewrites says. Parsing gives the same ids every time,
// so the ids of one round's check name the nodes of the next.
func (e *env132) rewrite(env *cel.Env, expression string, rewrites map[int64]rangeRewrite) (*cel.Ast, error) {
	a, iss := env.Parse(expression)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	native := a.NativeRep()
	next := celast.MaxID(native)
	id := func() int64 { next++; return next }
	fac := celast.NewExprFactory()
	var comps []celast.Expr
	celast.PreOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() == celast.ComprehensionKind && e.AsComprehension().HasIterVar2() && rewrites[e.ID()] != keepRange {
			comps = append(comps, e)
		}
	}))
	for _, c := range comps {
		comp := c.AsComprehension()
		r := comp.IterRange()
		var wrapped celast.Expr
		switch rewrites[c.ID()] {
		case untypedValues:
			wrapped = fac.NewCall(id(), untypedValuesFunction, r)
		case noRange:
			report := fac.NewComprehension(id(), r, noRangeVar, noRangeAccu,
				fac.NewLiteral(id(), types.False), fac.NewLiteral(id(), types.True),
				fac.NewIdent(id(), noRangeAccu), fac.NewIdent(id(), noRangeAccu))
			wrapped = fac.NewCall(id(), noRangeFunction, report)
		}
		c.SetKindCase(fac.NewComprehensionTwoVar(c.ID(), wrapped, comp.IterVar(), comp.IterVar2(),
			comp.AccuVar(), comp.AccuInit(), comp.LoopCondition(), comp.LoopStep(), comp.Result()))
	}
	return a, nil
}
