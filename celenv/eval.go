package celenv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"github.com/vapkit/vapkit/celenv/escaping"
	"github.com/vapkit/vapkit/internal/celvalue"
	"github.com/vapkit/vapkit/internal/costcheck"
)

// ErrCostBudgetExceeded marks the abort of a batch whose expressions spent
// more than its budget.
var ErrCostBudgetExceeded = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// ErrNeedsTracking aborts an untracked batch ([Batch.Untracked]) whose
// estimated costs would exhaust its budget: the measured costs may not, so
// the caller must evaluate the batch again, from its first expression, in a
// new batch without Untracked. Expressions are pure, so doing so changes
// nothing but the time spent.
var ErrNeedsTracking = errors.New("celenv: estimated costs exhaust the budget; evaluate the batch again with cost tracking")

// Input holds the values bound to the variables of one batch. Values are CEL
// values or Go values the default type adapter understands (maps with string
// keys, slices, strings, int64, float64, bool, nil). A nil Authorizer leaves
// `authorizer` unbound, so using it is the runtime error "no such
// attribute(s): authorizer", as in the API server's message expressions and
// audit annotations.
type Input struct {
	Object, OldObject, Params, Request, Namespace any
	Authorizer, RequestResource                   ref.Val
}

// Result is the outcome of one expression.
type Result struct {
	// Value is the result, nil when Err is set.
	Value ref.Val
	// Err is the API server's text for a failed expression, such as
	// "expression 'x' resulted in error: no such key: x" or
	// "compilation error: compilation failed: ...".
	Err error
	// Cost is what the evaluation charged to the batch, including variables
	// it evaluated first. When Estimated is set the batch ran without cost
	// tracking and Cost is the estimated upper bound instead.
	Cost int64
	// Estimated reports that Cost is an upper bound, not a measurement.
	Estimated bool
}

// Batch evaluates a list of expressions that share one budget and one memo
// of variables, as one `ForInput` of the API server does. A Batch belongs to
// one goroutine.
type Batch struct {
	ctx       context.Context
	scope     *Scope
	act       activation
	in        Input // a copy, so that callers' Inputs need not escape
	vars      lazyVariables
	remaining int64
	varCost   int64
	// sizes remembers the inputs' sizes (see Untracked); untracked is
	// set by Untracked, and fast when it lets programs whose bound allows
	// it run untracked (not while costcheck measures everything);
	// estimated records that some charge of the batch (or, varEstimated,
	// of the pending variables) is an estimate.
	sizes                   *Sizes
	untracked, fast         bool
	estimated, varEstimated bool
	// evalCtx and stop belong to the running Eval of a scope with
	// variables: stop interrupts it once its variables spent the budget.
	evalCtx context.Context
	stop    context.CancelFunc
}

// batchPool recycles released batches: a request evaluates a few per
// policy, and they are small but not tiny.
var batchPool = sync.Pool{New: func() any { return new(Batch) }}

// NewBatch starts a batch over in with the given budget.
func (s *Scope) NewBatch(ctx context.Context, in *Input, budget int64) *Batch {
	b := batchPool.Get().(*Batch)
	b.ctx, b.scope, b.remaining = ctx, s, budget
	b.in = *in
	b.vars.batch = b
	b.act = activation{in: &b.in, vars: &b.vars}
	return b
}

// Release returns b for reuse by a later NewBatch. Neither b nor its
// Input may be used afterwards; the Results it returned stay valid.
func (b *Batch) Release() {
	*b = Batch{}
	batchPool.Put(b)
}

// Untracked lets the batch evaluate without cost tracking each expression
// (and variable) whose estimated cost bound for the inputs' sizes is far
// below the per-call limit; that gives the same values and errors in well
// under half the time, and charges the bound instead of the measured cost.
// The batch measures the sizes the bounds depend on (of the values at the
// paths each expression reads, or with [SizeBound] of whole inputs it
// cannot follow) and remembers them in sizes, which may be nil and may be
// shared by the batches of one request. When the charges would exhaust the
// budget, Eval returns [ErrNeedsTracking]. Call Untracked before the first
// Eval.
func (b *Batch) Untracked(sizes *Sizes) *Batch {
	b.sizes, b.untracked = sizes, true
	b.fast = !costcheck.Enabled()
	return b
}

// fastBound returns the bound p is charged when it may run untracked.
func (b *Batch) fastBound(p *Program) (uint64, bool) {
	if !b.fast || p.fast == nil {
		return 0, false
	}
	return p.boundAt(b.programClass(p))
}

// programClass is the size class of the inputs p reads; size-free
// programs need no sizing.
func (b *Batch) programClass(p *Program) sizeClass {
	if p.sizeFree {
		return noSizeClass
	}
	if p.paths == nil {
		return noSizeClass // not estimated: never untracked
	}
	var bound uint64
	for _, path := range p.paths {
		bound = max(bound, b.sizes.PathBound(path, b.root(inputRoots(path.Root))))
	}
	return classFor(bound)
}

// root returns the input variable r.
func (b *Batch) root(r inputRoots) any {
	switch r {
	case rootObject:
		return b.in.Object
	case rootOldObject:
		return b.in.OldObject
	case rootParams:
		return b.in.Params
	case rootRequest:
		return b.in.Request
	case rootNamespace:
		return b.in.Namespace
	}
	return nil
}

// Skip charges p's estimated bound to the budget without evaluating p, for
// an expression whose value the caller will not use (the message of a
// validation that passed), when the batch may run p untracked and p reads
// no variables. It reports whether it charged, and the charge as a Result
// without a value; when the charge exhausts the budget the error is
// [ErrNeedsTracking], and the tracked evaluation the caller falls back to
// evaluates p.
func (b *Batch) Skip(p *Program) (Result, bool, error) {
	if p.err != nil || p.prog == nil || p.readsVariables {
		return Result{}, false, nil
	}
	bound, ok := b.fastBound(p)
	if !ok {
		return Result{}, false, nil
	}
	b.estimated = true
	if int64(bound) > b.remaining {
		return Result{}, true, ErrNeedsTracking
	}
	b.remaining -= int64(bound)
	return Result{Cost: int64(bound), Estimated: true}, true, nil
}

// exceeded is the error of a batch whose charges pass its budget.
func (b *Batch) exceeded() error {
	if b.estimated || b.varEstimated {
		return ErrNeedsTracking
	}
	return ErrCostBudgetExceeded
}

// Next starts a batch over in that continues b: it spends what b left of
// the budget, with b's cost tracking choices, and a fresh memo of variables
// (the API server's message expressions continue the validations' budget
// this way).
func (b *Batch) Next(in *Input) *Batch {
	n := b.scope.NewBatch(b.ctx, in, b.remaining)
	n.sizes, n.untracked, n.fast, n.estimated = b.sizes, b.untracked, b.fast, b.estimated
	return n
}

// Remaining returns the budget left.
func (b *Batch) Remaining() int64 { return b.remaining }

// Eval evaluates p. The error is non-nil only when the batch must stop: its
// budget is spent ([ErrCostBudgetExceeded]), estimated charges of an
// [Batch.Untracked] batch would spend it ([ErrNeedsTracking]), or the cost
// could not be determined; the expression's own failures are in
// Result.Err.
func (b *Batch) Eval(p *Program) (Result, error) {
	if p.err != nil {
		return Result{Err: fmt.Errorf("compilation error: %s", p.err.Detail)}, nil
	}
	if p.prog == nil {
		return Result{Err: errors.New("unexpected internal error compiling expression")}, nil
	}
	b.evalCtx = b.ctx
	if len(b.scope.variables) > 0 {
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		b.evalCtx, b.stop = ctx, cancel
	}
	if bound, ok := b.fastBound(p); ok {
		return b.evalUntracked(p, bound)
	}
	val, details, err := eval(b.evalCtx, p.prog, &b.act)
	b.evalCtx, b.stop = nil, nil
	cost, estimated := b.varCost, b.varEstimated
	b.varCost, b.varEstimated = 0, false
	b.estimated = b.estimated || estimated
	if cost > b.remaining {
		return Result{}, b.exceeded()
	}
	b.remaining -= cost
	if details == nil || details.ActualCost() == nil {
		return Result{}, fmt.Errorf("runtime cost could not be calculated for expression: %v, no further expression will be run", p.expression)
	}
	own := *details.ActualCost()
	b.check(p, own)
	if own > math.MaxInt64 || int64(own) > b.remaining {
		return Result{}, b.exceeded()
	}
	b.remaining -= int64(own)
	return exprResult(p, val, err, cost+int64(own), estimated), nil
}

// exprResult is the Result of an evaluation of p that charged cost.
func exprResult(p *Program, val ref.Val, err error, cost int64, estimated bool) Result {
	if err != nil {
		return Result{Err: fmt.Errorf("expression '%v' resulted in error: %v", p.expression, err), Cost: cost, Estimated: estimated}
	}
	return Result{Value: val, Cost: cost, Estimated: estimated}
}

// evalUntracked evaluates p without cost tracking, charging bound and
// what its variables charged.
func (b *Batch) evalUntracked(p *Program, bound uint64) (Result, error) {
	val, _, err := eval(b.evalCtx, p.fast, &b.act)
	b.evalCtx, b.stop = nil, nil
	cost := b.varCost + int64(bound)
	b.varCost, b.varEstimated = 0, false
	b.estimated = true
	if cost > b.remaining {
		return Result{}, b.exceeded()
	}
	b.remaining -= cost
	return exprResult(p, val, err, cost, true), nil
}

// check reports a measured cost above p's estimated bound while costcheck
// is enabled.
func (b *Batch) check(p *Program, actual uint64) {
	if !b.untracked || !costcheck.Enabled() {
		return
	}
	c := b.programClass(p)
	if bound, ok := p.boundAt(c); ok {
		costcheck.Check(p.expression, int(c), actual, bound)
	}
}

// eval evaluates prog, watching ctx only when it can be cancelled: cel-go
// derives a cancellable context for every ContextEval, which costs more
// than a small expression.
func eval(ctx context.Context, prog cel.Program, act *activation) (ref.Val, *cel.EvalDetails, error) {
	if ctx == nil || ctx.Done() == nil {
		return prog.Eval(act)
	}
	return prog.ContextEval(ctx, act)
}

// activation resolves the admission variables for cel-go.
type activation struct {
	in   *Input
	vars *lazyVariables
}

var _ interpreter.Activation = (*activation)(nil)

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case objectVar:
		return celvalue.Resolve(a.in.Object), true
	case oldObjectVar:
		return celvalue.Resolve(a.in.OldObject), true
	case paramsVar:
		return celvalue.Resolve(a.in.Params), true
	case requestVar:
		return celvalue.Resolve(a.in.Request), true
	case namespaceVar:
		return celvalue.Resolve(a.in.Namespace), true
	case authorizerVar:
		return a.in.Authorizer, a.in.Authorizer != nil
	case requestResourceVar:
		return a.in.RequestResource, a.in.RequestResource != nil
	case variablesVar:
		return a.vars, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// lazyVariables is the value of `variables`: each field is evaluated on first
// use within the batch and remembered, errors included.
type lazyVariables struct {
	batch  *Batch
	values map[string]ref.Val
}

var (
	_ ref.Val       = (*lazyVariables)(nil)
	_ traits.Mapper = (*lazyVariables)(nil)

	variablesType = types.NewTypeValue(variablesTypeName, traits.IndexerType|traits.FieldTesterType|traits.IterableType)
)

func (l *lazyVariables) resolve(name string) ref.Val {
	if v, ok := l.values[name]; ok {
		return v
	}
	p := l.batch.scope.variables[name]
	var v ref.Val
	if l.batch.varCost > l.batch.remaining {
		// The variables evaluated so far already spent the budget, so Eval
		// will report ErrCostBudgetExceeded whatever happens next; stop
		// evaluating, or a chain of thousands of variables could run far
		// past the budget before that check.
		v = types.NewErr("%s", ErrCostBudgetExceeded.Error())
	} else if p.err != nil {
		v = types.NewErr("composited variable %q fails to compile: %v", name, p.err.Detail)
	} else if bound, ok := l.batch.fastBound(p); ok {
		out, _, err := eval(l.batch.evalCtx, p.fast, &l.batch.act)
		l.batch.varCost += int64(bound)
		l.batch.varEstimated = true
		if err != nil {
			v = types.NewErr("composited variable %q fails to evaluate: %v", name, err)
		} else {
			v = out
		}
	} else {
		out, details, err := eval(l.batch.evalCtx, p.prog, &l.batch.act)
		switch {
		case details == nil:
			v = types.NewErr("unable to get evaluation details of variable %q", name)
		case details.ActualCost() == nil:
			v = types.NewErr("unable to calculate cost of variable %q", name)
		default:
			c := *details.ActualCost()
			l.batch.check(p, c)
			if c > math.MaxInt64 {
				c = math.MaxInt64
			}
			l.batch.varCost += int64(c)
			if l.batch.varCost > l.batch.remaining && l.batch.stop != nil {
				// Eval reports ErrCostBudgetExceeded whatever the result;
				// interrupt the variables and expression still running.
				l.batch.stop()
			}
			if err != nil {
				v = types.NewErr("composited variable %q fails to evaluate: %v", name, err)
			} else {
				v = out
			}
		}
	}
	if l.values == nil {
		l.values = map[string]ref.Val{}
	}
	l.values[name] = v
	return v
}

func (l *lazyVariables) Find(key ref.Val) (ref.Val, bool) {
	s, ok := key.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(key), true
	}
	name, ok := escaping.Unescape(string(s))
	if !ok {
		return nil, false
	}
	if _, ok := l.batch.scope.variables[name]; !ok {
		return nil, false
	}
	return l.resolve(name), true
}

func (l *lazyVariables) Get(key ref.Val) ref.Val {
	if v, ok := l.Find(key); ok {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

func (l *lazyVariables) Contains(key ref.Val) ref.Val {
	v, ok := l.Find(key)
	if v != nil && types.IsUnknownOrError(v) {
		return v
	}
	return types.Bool(ok)
}

func (l *lazyVariables) Size() ref.Val { return types.Int(len(l.batch.scope.variables)) }

func (l *lazyVariables) Iterator() traits.Iterator {
	return &variablesIterator{vars: l}
}

func (l *lazyVariables) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("disallowed conversion from %q to %q", variablesTypeName, t.Name())
}

func (l *lazyVariables) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case variablesType:
		return l
	case types.TypeType:
		return variablesType
	}
	return types.NewErr("disallowed conversion from %q to %q", variablesTypeName, t.TypeName())
}

func (l *lazyVariables) Equal(other ref.Val) ref.Val {
	o, ok := other.(*lazyVariables)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(o == l)
}

func (l *lazyVariables) Type() ref.Type { return variablesType }

func (l *lazyVariables) Value() any { return types.NoSuchOverloadErr() }

type variablesIterator struct {
	vars *lazyVariables
	i    int
}

func (it *variablesIterator) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("disallowed conversion to %q", t.Name())
}
func (it *variablesIterator) ConvertToType(t ref.Type) ref.Val {
	return types.NewErr("disallowed conversion o %q", t.TypeName())
}
func (it *variablesIterator) Equal(other ref.Val) ref.Val {
	o, ok := other.(*variablesIterator)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(o == it)
}
func (it *variablesIterator) Type() ref.Type { return types.IteratorType }
func (it *variablesIterator) Value() any     { return nil }
func (it *variablesIterator) HasNext() ref.Val {
	return types.Bool(it.i < len(it.vars.batch.scope.order))
}
func (it *variablesIterator) Next() ref.Val {
	if it.i >= len(it.vars.batch.scope.order) {
		return nil
	}
	v := it.vars.Get(types.String(it.vars.batch.scope.order[it.i]))
	it.i++
	return v
}
