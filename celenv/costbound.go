package celenv

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/celenv/internal/library"
	"github.com/vapkit/vapkit/internal/celvalue"
)

// Cost tracking makes a CEL evaluation two to three times slower, and the
// cost it measures only matters when a limit is reached. Compile therefore
// also estimates an upper bound of each expression's cost: once for inputs
// of unknown size, which bounds the expressions whose cost does not depend
// on sizes, and otherwise for inputs whose strings, bytes, lists and maps
// have at most N elements, for a few N (the size classes). An expression
// whose bound for the request's inputs is far below the per-call limit runs
// untracked and charges its bound to the budget; a batch that would run out
// of budget on such charges is evaluated again, tracked, by the caller, so
// every limit is enforced on measured costs exactly as the API server does.

// sizeClasses are the input size bounds Compile estimates costs for.
var sizeClasses = [...]uint64{16, 64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10}

// sizeClass is the index of the smallest size class that holds some
// inputs, or noSizeClass.
type sizeClass int8

// noSizeClass is the class of inputs larger than every size class.
const noSizeClass sizeClass = -1

// classFor returns the size class of inputs whose size bound is bound.
func classFor(bound uint64) sizeClass {
	for i, c := range sizeClasses {
		if bound <= c {
			return sizeClass(i)
		}
	}
	return noSizeClass
}

// inputRoots names input variables, one bit each; a size path starts at
// one of them.
type inputRoots uint8

// The input variables whose sizes bound the cost of an expression.
const (
	rootObject inputRoots = 1 << iota
	rootOldObject
	rootParams
	rootRequest
	rootNamespace
)

var rootNames = map[string]inputRoots{
	objectVar:    rootObject,
	oldObjectVar: rootOldObject,
	paramsVar:    rootParams,
	requestVar:   rootRequest,
	namespaceVar: rootNamespace,
}

// safetyFactor keeps an untracked expression this many times below the
// per-call limit, so that a constant or two the estimate may miss cannot
// matter.
const safetyFactor = 2

// untrackedLimit is the largest estimate that lets an expression run
// untracked.
const untrackedLimit = perCallLimit / safetyFactor

// boundAt returns the estimated cost bound of p for inputs of class c and
// whether it lets p run untracked.
func (p *Program) boundAt(c sizeClass) (uint64, bool) {
	if p.sizeFree {
		return p.maxCost[0], true
	}
	if c < 0 {
		return 0, false
	}
	b := p.maxCost[c]
	return b, b <= untrackedLimit
}

// estimateCosts fills p's cost estimates and size paths, whether it reads
// variables or the authorizer, and inputPath from its checked AST.
func (s *Scope) estimateCosts(p *Program, env *cel.Env, checked *cel.Ast) {
	for i := range p.maxCost {
		p.maxCost[i] = math.MaxUint64
	}
	for _, r := range checked.NativeRep().ReferenceMap() {
		if r == nil {
			continue
		}
		switch r.Name {
		case variablesVar:
			p.readsVariables = true
		case authorizerVar, requestResourceVar:
			p.readsAuthorizer = true
		}
	}
	if p.readsVariables {
		read, all := variablesRead(checked.NativeRep().Expr())
		for name, v := range s.variables {
			if all || read[name] {
				p.readsAuthorizer = p.readsAuthorizer || v.readsAuthorizer
			}
		}
	}
	p.inputPath = isInputPath(checked.NativeRep().Expr(), s.variables)
	if p.inputPath {
		vp := pathSet{}
		valuePaths(vp, checked.NativeRep().Expr(), s.variables)
		p.valuePaths = vp.list(s.env.paths)
	}
	if s.env.custom {
		return
	}
	read := pathSet{}
	pieces := inputPieces(read, checked.NativeRep().Expr(), s.variables)
	variables := s.variables
	estimateWith := func(sizes inputSizes) uint64 {
		sizes.variables, sizes.pieces = variables, pieces
		lib := &library.CostEstimator{SizeEstimator: sizes}
		cost, err := env.EstimateCost(checked, upperEstimator{lib})
		if err != nil {
			return math.MaxUint64
		}
		return cost.Max
	}
	restore := countSelects(checked.NativeRep())
	defer restore()
	estimate := func(bound uint64) uint64 { return estimateWith(inputSizes{bound: bound, read: read}) }
	if c := estimate(math.MaxUint64); c <= untrackedLimit {
		p.sizeFree = true
		for i := range p.maxCost {
			p.maxCost[i] = c
		}
		return
	}
	defer func() {
		p.paths = read.list(s.env.paths)
		if n := len(p.paths); n > 1 && n <= maxMixedPaths && p.maxCost[len(p.maxCost)-1] > untrackedLimit {
			p.mixed = &mixedBounds{estimate: func(byPath map[string]uint64, top uint64) uint64 {
				defer countSelects(checked.NativeRep())()
				return estimateWith(inputSizes{bound: top, byPath: byPath, read: pathSet{}})
			}}
		}
	}()
	for i, bound := range sizeClasses {
		p.maxCost[i] = estimate(bound)
		if p.maxCost[i] > untrackedLimit {
			return // larger classes cost more still
		}
	}
}

// pathSet collects the paths (see celvalue.Path) from the input
// variables to the values whose sizes an expression's estimate depends
// on, without repetition. The estimator asks for the size of a value only
// by its path (cel-go calls the steps into a comprehension's range
// "@items", "@keys" and so on), and every runtime charge depends on the
// sizes of the values it is given, not on what they hold (the library's
// deep traversals are bounded apart, see library.UpperCallCost): so the
// largest size found at the end of the paths bounds the estimate as well
// as the largest size in the whole inputs would, at a fraction of the
// work.
type pathSet map[string]pathSpec

// pathSpec is one path of a pathSet.
type pathSpec struct {
	root   inputRoots
	fields []string
}

// wildcardStep stands for every element, key or value of a list or map.
const wildcardStep = celvalue.Wildcard

func (ps pathSet) add(root inputRoots, fields []string) {
	key := celvalue.PathKey(uint8(root), fields)
	if _, ok := ps[key]; !ok {
		ps[key] = pathSpec{root: root, fields: slices.Clone(fields)}
	}
}

// addUnder adds each of paths extended by the steps of rest.
func (ps pathSet) addUnder(paths []*celvalue.Path, rest []string) {
	for _, p := range paths {
		ps.add(inputRoots(p.Root), slices.Concat(p.Fields, rest))
	}
}

// list returns the paths in a fixed order, interned in t.
func (ps pathSet) list(t *celvalue.PathTable) []*celvalue.Path {
	keys := slices.Sorted(maps.Keys(ps))
	out := make([]*celvalue.Path, 0, len(keys))
	for _, k := range keys {
		out = append(out, t.Intern(uint8(ps[k].root), ps[k].fields))
	}
	return out
}

// estimatorSteps turns the steps of a cost estimator path (after its root or
// variable) into celvalue.Path steps.
func estimatorSteps(path []string) []string {
	steps := make([]string, len(path))
	for i, f := range path {
		if strings.HasPrefix(f, "@") {
			f = wildcardStep
		}
		steps[i] = f
	}
	return steps
}

// valuePaths adds to ps the paths of every value e, an input path (see
// isInputPath), can take: selections add their field, indexes a wildcard,
// and a conditional both branches.
func valuePaths(ps pathSet, e celast.Expr, variables map[string]*Program) {
	var walk func(e celast.Expr, rest []string)
	walk = func(e celast.Expr, rest []string) {
		switch e.Kind() {
		case celast.IdentKind:
			if r := rootNames[e.AsIdent()]; r != 0 {
				ps.add(r, rest)
			}
		case celast.SelectKind:
			sel := e.AsSelect()
			if op := sel.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == variablesVar {
				if v := variables[sel.FieldName()]; v != nil {
					ps.addUnder(v.valuePaths, rest)
				}
				return
			}
			walk(sel.Operand(), slices.Concat([]string{sel.FieldName()}, rest))
		case celast.CallKind:
			call := e.AsCall()
			switch {
			case call.FunctionName() == "_[_]" && len(call.Args()) == 2:
				walk(call.Args()[0], slices.Concat([]string{wildcardStep}, rest))
			case call.FunctionName() == "_?_:_" && len(call.Args()) == 3:
				walk(call.Args()[1], rest)
				walk(call.Args()[2], rest)
			}
		}
	}
	walk(e, nil)
}

// variablesRead returns the names of the variables e selects
// (`variables.name`), or all when e uses `variables` otherwise. A variable's
// own reads are already included in its Program.
func variablesRead(e celast.Expr) (names map[string]bool, all bool) {
	selected := map[int64]bool{}
	celast.PreOrderVisit(e, celast.NewExprVisitor(func(e celast.Expr) {
		switch e.Kind() {
		case celast.SelectKind:
			// Visited before its operand.
			if op := e.AsSelect().Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == variablesVar {
				if names == nil {
					names = map[string]bool{}
				}
				names[e.AsSelect().FieldName()] = true
				selected[op.ID()] = true
			}
		case celast.IdentKind:
			if e.AsIdent() == variablesVar && !selected[e.ID()] {
				all = true
			}
		}
	}))
	return names, all
}

// countSelects retypes a's dyn operands of field selections as maps, until
// restore is called, so that the estimate charges every selection its
// runtime cost of one: cel-go's estimate charges a selection only on maps
// and messages, but its cost tracker charges every qualification, and most
// admission inputs are dyn. The programs are already planned, so nothing
// else reads the types.
func countSelects(a *celast.AST) (restore func()) {
	mapType := types.NewMapType(types.StringType, types.DynType)
	saved := map[int64]*types.Type{}
	celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.SelectKind || e.AsSelect().IsTestOnly() {
			return
		}
		id := e.AsSelect().Operand().ID()
		t := a.GetType(id)
		switch t.Kind() {
		case types.MapKind, types.StructKind, types.TypeParamKind:
			return
		}
		if _, done := saved[id]; !done {
			saved[id] = t
			a.SetType(id, mapType)
		}
	}))
	return func() {
		for id, t := range saved {
			a.SetType(id, t)
		}
	}
}

// upperEstimator is the library's estimator with the calls whose upstream
// estimate may fall below the actual cost replaced by bounds.
type upperEstimator struct{ lib *library.CostEstimator }

func (u upperEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	return u.lib.EstimateSize(n)
}

func (u upperEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	if c := u.lib.UpperCallCost(function, overloadID, target, args); c != nil {
		return c
	}
	return u.lib.EstimateCallCost(function, overloadID, target, args)
}

// isInputPath reports whether e yields a value found inside an input
// variable (a chain of selections and indexes from one, or a conditional
// between such values and null), so that its size is bounded like the
// inputs'.
func isInputPath(e celast.Expr, variables map[string]*Program) bool {
	switch e.Kind() {
	case celast.IdentKind:
		return rootNames[e.AsIdent()] != 0
	case celast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return false
		}
		if op := sel.Operand(); op.Kind() == celast.IdentKind && op.AsIdent() == variablesVar {
			v := variables[sel.FieldName()]
			return v != nil && v.inputPath
		}
		return isInputPath(sel.Operand(), variables)
	case celast.CallKind:
		call := e.AsCall()
		switch {
		case call.FunctionName() == "_[_]" && len(call.Args()) == 2:
			return isInputPath(call.Args()[0], variables)
		case call.FunctionName() == "_?_:_" && len(call.Args()) == 3:
			a, b := call.Args()[1], call.Args()[2]
			return (isInputPath(a, variables) || isNull(a)) && (isInputPath(b, variables) || isNull(b))
		}
	}
	return false
}

// inputPieces returns the IDs of the identifiers that name an element of
// `x.split(...)` for an input path x, inside the comprehension iterating
// over it: each is a substring of an input string, so no longer than the
// inputs' bound. cel-go knows no element size for a call's result, and
// `list.all(e, e ...)` over split strings is common in policies.
//
// It adds the paths of the split strings to ps.
func inputPieces(ps pathSet, root celast.Expr, variables map[string]*Program) map[int64][]pathSpec {
	var ids map[int64][]pathSpec
	celast.PreOrderVisit(root, celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.ComprehensionKind {
			return
		}
		comp := e.AsComprehension()
		if comp.HasIterVar2() {
			return
		}
		r := comp.IterRange()
		if r.Kind() != celast.CallKind || r.AsCall().FunctionName() != "split" || !r.AsCall().IsMemberFunction() ||
			!isInputPath(r.AsCall().Target(), variables) {
			return
		}
		split := pathSet{}
		valuePaths(split, r.AsCall().Target(), variables)
		maps.Copy(ps, split)
		name := comp.IterVar()
		for _, body := range []celast.Expr{comp.LoopCondition(), comp.LoopStep()} {
			markIdent(body, name, func(id int64) {
				if ids == nil {
					ids = map[int64][]pathSpec{}
				}
				ids[id] = append(ids[id], slices.Collect(maps.Values(split))...)
			})
		}
	}))
	return ids
}

// markIdent calls mark for each identifier name in e that is not shadowed
// by an inner comprehension variable of the same name.
func markIdent(e celast.Expr, name string, mark func(int64)) {
	switch e.Kind() {
	case celast.IdentKind:
		if e.AsIdent() == name {
			mark(e.ID())
		}
	case celast.SelectKind:
		markIdent(e.AsSelect().Operand(), name, mark)
	case celast.CallKind:
		c := e.AsCall()
		if c.IsMemberFunction() {
			markIdent(c.Target(), name, mark)
		}
		for _, a := range c.Args() {
			markIdent(a, name, mark)
		}
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			markIdent(el, name, mark)
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			me := en.AsMapEntry()
			markIdent(me.Key(), name, mark)
			markIdent(me.Value(), name, mark)
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			markIdent(f.AsStructField().Value(), name, mark)
		}
	case celast.ComprehensionKind:
		c := e.AsComprehension()
		markIdent(c.IterRange(), name, mark)
		markIdent(c.AccuInit(), name, mark)
		if c.IterVar() == name || c.AccuVar() == name || (c.HasIterVar2() && c.IterVar2() == name) {
			return // shadowed inside
		}
		markIdent(c.LoopCondition(), name, mark)
		markIdent(c.LoopStep(), name, mark)
		markIdent(c.Result(), name, mark)
	}
}

func isNull(e celast.Expr) bool {
	return e.Kind() == celast.LiteralKind && e.AsLiteral() == types.NullValue
}

// inputSizes is the size estimator of one size class: every value reached
// from an input variable, or from a variable that is a path into one, has
// at most bound elements; anything else is left to cel-go.
type inputSizes struct {
	bound     uint64
	variables map[string]*Program
	// pieces are the identifiers that stand for parts of input strings,
	// with the paths of those strings.
	pieces map[int64][]pathSpec
	// read collects the paths of the values given the bound.
	read pathSet
	// byPath, when set, holds a smaller bound for some paths (keyed by
	// celvalue.PathKey); see mixedBounds.
	byPath map[string]uint64
}

func (s inputSizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	if s.bound == math.MaxUint64 {
		return nil // unknown: cel-go's own unbounded estimate
	}
	if e := n.Expr(); e != nil {
		if strs, ok := s.pieces[e.ID()]; ok {
			b := s.bound
			if s.byPath != nil && len(strs) > 0 {
				b = 0
				for _, q := range strs {
					b = max(b, s.pathBound(q.root, q.fields))
				}
			}
			return &checker.SizeEstimate{Min: 0, Max: b}
		}
	}
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	if r := rootNames[path[0]]; r != 0 {
		steps := estimatorSteps(path[1:])
		s.read.add(r, steps)
		return &checker.SizeEstimate{Min: 0, Max: s.pathBound(r, steps)}
	}
	if path[0] == variablesVar && len(path) >= 2 {
		if v := s.variables[path[1]]; v != nil && v.inputPath {
			rest := estimatorSteps(path[2:])
			s.read.addUnder(v.valuePaths, rest)
			b := s.bound
			if s.byPath != nil && len(v.valuePaths) > 0 {
				b = 0
			}
			for _, q := range v.valuePaths {
				b = max(b, s.pathBound(inputRoots(q.Root), slices.Concat(q.Fields, rest)))
			}
			return &checker.SizeEstimate{Min: 0, Max: b}
		}
	}
	return nil
}

// pathBound is the size bound of the values at the path of root and steps.
func (s inputSizes) pathBound(root inputRoots, steps []string) uint64 {
	if s.byPath == nil {
		return s.bound
	}
	if b, ok := s.byPath[celvalue.PathKey(uint8(root), steps)]; ok {
		return b
	}
	return s.bound
}

func (inputSizes) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}
