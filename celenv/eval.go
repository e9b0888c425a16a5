package celenv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// ErrCostBudgetExceeded marks the abort of a batch whose expressions spent
// more than its budget.
var ErrCostBudgetExceeded = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

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
	// it evaluated first.
	Cost int64
}

// Batch evaluates a list of expressions that share one budget and one memo
// of variables, as one `ForInput` of the API server does. A Batch belongs to
// one goroutine.
type Batch struct {
	ctx       context.Context
	scope     *Scope
	act       activation
	remaining int64
	varCost   int64
	// evalCtx and stop belong to the running Eval of a scope with
	// variables: stop interrupts it once its variables spent the budget.
	evalCtx context.Context
	stop    context.CancelFunc
}

// NewBatch starts a batch over in with the given budget.
func (s *Scope) NewBatch(ctx context.Context, in *Input, budget int64) *Batch {
	b := &Batch{ctx: ctx, scope: s, remaining: budget}
	b.act = activation{in: in}
	b.act.vars = &lazyVariables{batch: b}
	return b
}

// Remaining returns the budget left.
func (b *Batch) Remaining() int64 { return b.remaining }

// Eval evaluates p. The error is non-nil only when the batch must stop: its
// budget is spent ([ErrCostBudgetExceeded]) or the cost could not be
// determined; the expression's own failures are in Result.Err.
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
	val, details, err := p.prog.ContextEval(b.evalCtx, &b.act)
	b.evalCtx, b.stop = nil, nil
	cost := b.varCost
	b.varCost = 0
	if cost > b.remaining {
		return Result{}, ErrCostBudgetExceeded
	}
	b.remaining -= cost
	if details == nil || details.ActualCost() == nil {
		return Result{}, fmt.Errorf("runtime cost could not be calculated for expression: %v, no further expression will be run", p.expression)
	}
	own := *details.ActualCost()
	if own > math.MaxInt64 || int64(own) > b.remaining {
		return Result{}, ErrCostBudgetExceeded
	}
	b.remaining -= int64(own)
	cost += int64(own)
	if err != nil {
		return Result{Err: fmt.Errorf("expression '%v' resulted in error: %v", p.expression, err), Cost: cost}, nil
	}
	return Result{Value: val, Cost: cost}, nil
}

// Lazy is an Input value computed on first use: ResolveName calls it when
// an expression reads the variable. The function must be cheap to call
// again (remember its result) and is called only from the goroutine that
// evaluates the batch. It lets callers skip preparing values, such as the
// namespace object, that no expression reads.
type Lazy func() any

func resolveLazy(v any) any {
	if f, ok := v.(Lazy); ok {
		return f()
	}
	return v
}

// activation resolves the admission variables for cel-go.
type activation struct {
	in   *Input
	vars *lazyVariables
}

var _ interpreter.Activation = (*activation)(nil)

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case ObjectVar:
		return resolveLazy(a.in.Object), true
	case OldObjectVar:
		return resolveLazy(a.in.OldObject), true
	case ParamsVar:
		return resolveLazy(a.in.Params), true
	case RequestVar:
		return resolveLazy(a.in.Request), true
	case NamespaceVar:
		return resolveLazy(a.in.Namespace), true
	case AuthorizerVar:
		return a.in.Authorizer, a.in.Authorizer != nil
	case RequestResourceVar:
		return a.in.RequestResource, a.in.RequestResource != nil
	case VariablesVar:
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

	variablesType = types.NewTypeValue(VariablesTypeName, traits.IndexerType|traits.FieldTesterType|traits.IterableType)
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
	} else {
		out, details, err := p.prog.ContextEval(l.batch.evalCtx, &l.batch.act)
		switch {
		case details == nil:
			v = types.NewErr("unable to get evaluation details of variable %q", name)
		case details.ActualCost() == nil:
			v = types.NewErr("unable to calculate cost of variable %q", name)
		default:
			c := *details.ActualCost()
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
	name, ok := Unescape(string(s))
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
	return nil, fmt.Errorf("disallowed conversion from %q to %q", VariablesTypeName, t.Name())
}

func (l *lazyVariables) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case variablesType:
		return l
	case types.TypeType:
		return variablesType
	}
	return types.NewErr("disallowed conversion from %q to %q", VariablesTypeName, t.TypeName())
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
