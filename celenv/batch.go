package celenv

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/cel-go/common/types/ref"

	"github.com/vapkit/vapkit/internal/celvalue"
	"github.com/vapkit/vapkit/internal/costcheck"
)

// ErrCostBudgetExceeded marks the abort of a batch whose expressions spent
// more than its budget.
var ErrCostBudgetExceeded = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// errRetrack tells Eval that estimated charges would exhaust the budget:
// the chain must be measured (see Batch.retrack).
var errRetrack = errors.New("celenv: estimated charges exhaust the budget")

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
	// Value is the result, nil when Err is set or when the expression was
	// only charged (see [Batch.Charge]).
	Value ref.Val
	// Err is the API server's text for a failed expression, such as
	// "expression 'x' resulted in error: no such key: x" or
	// "compilation error: compilation failed: ...".
	Err error
	// Cost is what the evaluation charged to the batch, including variables
	// it evaluated first. When Estimated is set it is the estimated upper
	// bound the batch charged instead of measuring.
	Cost int64
	// Estimated reports that Cost is an upper bound, not a measurement.
	Estimated bool
}

// Session holds what the batches of one request share: the sizes of its
// inputs, which decide the cost estimates, and the batches themselves,
// recycled from one NewBatch to the next. Batches started with a Session
// evaluate without cost tracking where an estimate proves every limit out
// of reach (see the package documentation), unless Measure is set;
// batches without one track every cost. The zero value is ready to use. A Session belongs to one
// goroutine; call Reset after each request, whose values may be at the
// same addresses as the next one's.
type Session struct {
	// Measure makes the session's batches measure every cost, as the API
	// server does, instead of charging estimates where they allow.
	Measure bool

	sizes celvalue.Sizes
	// chain are the batches handed out since the last NewBatch; free
	// those ready for reuse.
	chain, free []*Batch
}

// Reset forgets the sizes of the request's inputs and makes every batch of
// the session reusable, keeping the memory for the next request.
func (s *Session) Reset() {
	s.sizes.Reset()
	s.recycle()
}

// recycle makes the batches of the last chain reusable.
func (s *Session) recycle() {
	for _, b := range s.chain {
		b.reset()
		s.free = append(s.free, b)
	}
	clear(s.chain)
	s.chain = s.chain[:0]
}

// batch returns a batch for the session's current chain.
func (s *Session) batch() *Batch {
	if s == nil {
		return new(Batch)
	}
	var b *Batch
	if n := len(s.free); n > 0 {
		b, s.free[n-1] = s.free[n-1], nil
		s.free = s.free[:n-1]
	} else {
		b = new(Batch)
	}
	s.chain = append(s.chain, b)
	return b
}

// Batch evaluates a list of expressions that share one budget and one memo
// of variables, as one `ForInput` of the API server does. A Batch belongs to
// one goroutine.
type Batch struct {
	batchState
	vars lazyVariables
	// progs are the programs evaluated or charged, in order, and results
	// their Results: what retrack measures again.
	progs   []*Program
	results []Result
}

// batchState is what a Batch holds for one batch only; reset zeroes it,
// while the slices and memo of Batch keep their memory.
type batchState struct {
	ctx     context.Context
	scope   *Scope
	session *Session
	act     activation
	in      Input // a copy, so that callers' Inputs need not escape
	// budget is what the batch started with; remaining what is left.
	budget, remaining int64
	varCost           int64
	// prev is the batch this one continues (see Next), or nil.
	prev *Batch
	// sizes remembers the inputs' sizes; mayEstimate is set for batches
	// of a session, and fast while they let programs whose bound allows
	// it run untracked (not while costcheck measures everything);
	// estimated records that some charge of the chain (or, varEstimated,
	// of the pending variables) is an estimate.
	sizes                   *celvalue.Sizes
	mayEstimate, fast       bool
	estimated, varEstimated bool
	// evalCtx and stop belong to the running Eval of a scope with
	// variables: stop interrupts it once its variables spent the budget.
	evalCtx context.Context
	stop    context.CancelFunc
}

// reset clears b for reuse, keeping its slices and memo. Only the entries
// the batch used are cleared: those past the slices' lengths were cleared
// by earlier resets.
func (b *Batch) reset() {
	clear(b.progs)
	clear(b.results)
	clear(b.vars.read)
	if len(b.vars.values) > 0 {
		clear(b.vars.values)
	}
	b.progs, b.results, b.vars.read = b.progs[:0], b.results[:0], b.vars.read[:0]
	b.batchState = batchState{}
}

// NewBatch starts a batch over in with the given budget. With a non-nil
// session the batch may evaluate without cost tracking where estimates
// allow, and it and its Results stay valid until the session's next
// NewBatch or Reset; with a nil one every cost is measured.
func (s *Scope) NewBatch(ctx context.Context, session *Session, in *Input, budget int64) *Batch {
	if session != nil {
		session.recycle()
	}
	b := session.batch()
	b.init(ctx, s, session, in, budget)
	return b
}

// init prepares b, new or reset, for a batch over in.
func (b *Batch) init(ctx context.Context, s *Scope, session *Session, in *Input, budget int64) {
	b.ctx, b.scope, b.session = ctx, s, session
	b.budget, b.remaining = budget, budget
	b.in = *in
	b.vars.batch = b
	b.act = activation{in: &b.in, vars: &b.vars}
	if session != nil && !session.Measure {
		b.sizes, b.mayEstimate = &session.sizes, true
		b.fast = !costcheck.Enabled()
	}
}

// Next starts a batch over in that continues b: it spends what b left of
// the budget, with a fresh memo of variables (the API server's message
// expressions continue the validations' budget this way). b evaluates
// nothing more afterwards. Should the estimates of the new batch exhaust
// the budget, the costs of b's expressions are measured again with it.
func (b *Batch) Next(in *Input) *Batch {
	n := b.session.batch()
	n.init(b.ctx, b.scope, b.session, in, b.remaining)
	n.prev = b
	n.fast, n.estimated = b.fast, b.estimated
	return n
}

// Results returns the Results of the expressions b evaluated or charged,
// in order. Should the budget run short on estimates, the batch measures
// the costs of its chain (see [Batch.Next]) and updates these Results as
// the API server, which always measures, would have them.
func (b *Batch) Results() []Result { return b.results }

// Variables returns the variables b evaluated, each once, in the order the
// expressions first read them, with their values; valid as long as
// Results. Variables no expression read are absent: they were never
// evaluated.
func (b *Batch) Variables() []Variable { return b.vars.read }

// Eval evaluates p. The error is non-nil only when the batch must stop: its
// budget is spent ([ErrCostBudgetExceeded]) or the cost could not be
// determined; the expression's own failures are in Result.Err.
func (b *Batch) Eval(p *Program) (Result, error) {
	r, err := b.eval(p)
	if err == errRetrack {
		if err = b.retrack(); err == nil {
			r, err = b.eval(p)
		}
	}
	if err != nil {
		return Result{}, err
	}
	b.progs, b.results = append(b.progs, p), append(b.results, r)
	return r, nil
}

// Charge accounts for p, an expression whose value the caller will not use
// (the message of a validation that passed): when the batch may run p
// untracked and p reads no variables it charges p's estimated bound
// without evaluating p, and the Result has no Value; otherwise it
// evaluates p as Eval does.
func (b *Batch) Charge(p *Program) (Result, error) {
	if p.err != nil || p.prog == nil || p.readsVariables {
		return b.Eval(p)
	}
	bound, ok := b.fastBound(p)
	if !ok {
		return b.Eval(p)
	}
	b.estimated = true
	if int64(bound) > b.remaining {
		if err := b.retrack(); err != nil {
			return Result{}, err
		}
		return b.Eval(p)
	}
	b.remaining -= int64(bound)
	r := Result{Cost: int64(bound), Estimated: true}
	b.progs, b.results = append(b.progs, p), append(b.results, r)
	return r, nil
}

// retrack turns cost tracking on for b's chain and measures the costs of
// what it evaluated so far, batch by batch from the first, as a tracked
// evaluation would have charged them, so that the budget is decided on
// measurements. Estimates bound measurements, so the measured charges fit
// wherever the estimated ones did. Expressions are pure: the values stay.
func (b *Batch) retrack() error {
	chain := []*Batch{}
	for x := b; x != nil; x = x.prev {
		chain = append(chain, x)
	}
	remaining := chain[len(chain)-1].budget
	for i := len(chain) - 1; i >= 0; i-- {
		x := chain[i]
		x.fast, x.estimated, x.varEstimated, x.varCost = false, false, false, 0
		x.remaining = remaining
		clear(x.vars.values)
		clear(x.vars.read)
		x.vars.read = x.vars.read[:0]
		for j, p := range x.progs {
			r, err := x.eval(p)
			if err != nil {
				return err
			}
			x.results[j] = r
		}
		remaining = x.remaining
	}
	return nil
}

// eval is Eval without recording the Result; errRetrack reports estimated
// charges that would exhaust the budget.
func (b *Batch) eval(p *Program) (Result, error) {
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

// exceeded is the error of a batch whose charges pass its budget.
func (b *Batch) exceeded() error {
	if b.estimated || b.varEstimated {
		return errRetrack
	}
	return ErrCostBudgetExceeded
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

// fastBound returns the bound p is charged when it may run untracked.
func (b *Batch) fastBound(p *Program) (uint64, bool) {
	if !b.fast || p.fast == nil {
		return 0, false
	}
	_, bound, ok := b.programBound(p)
	return bound, ok
}

// programBound returns the size class of the inputs p reads, p's
// estimated bound for them and whether it lets p run untracked. Size-free
// programs need no sizing. When the class of the largest input is too
// large, the bound for each path's own size is tried (see mixedBounds): a
// list of a thousand containers need not make their limits maps a
// thousand entries long.
func (b *Batch) programBound(p *Program) (sizeClass, uint64, bool) {
	if p.sizeFree {
		return noSizeClass, p.maxCost[0], true
	}
	if p.paths == nil {
		return noSizeClass, 0, false // not estimated: never untracked
	}
	var sizes [maxMixedPaths]uint64
	var top uint64
	for i, path := range p.paths {
		s := b.sizes.PathBound(path, b.root(inputRoots(path.Root)))
		top = max(top, s)
		if i < len(sizes) {
			sizes[i] = s
		}
	}
	c := classFor(top)
	if bound, ok := p.boundAt(c); ok || p.mixed == nil {
		return c, bound, ok
	}
	bound, ok := p.mixed.bound(sizes[:len(p.paths)], p.paths)
	return c, bound, ok
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

// check reports a measured cost above p's estimated bound while costcheck
// is enabled.
func (b *Batch) check(p *Program, actual uint64) {
	if !b.mayEstimate || !costcheck.Enabled() {
		return
	}
	if c, bound, ok := b.programBound(p); ok {
		costcheck.Check(p.expression, int(c), actual, bound)
	}
}
