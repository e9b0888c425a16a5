package celenv

import (
	"context"
	"fmt"
	"math"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"github.com/vapkit/vapkit/celenv/escaping"
	"github.com/vapkit/vapkit/internal/celvalue"
)

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
	// read lists the evaluated variables in the order they were first
	// read (see Batch.Variables).
	read []Variable
}

// Variable is a variable a [Batch] evaluated, and its value: a CEL error
// value (types.Err) when the evaluation failed.
type Variable struct {
	Name  string
	Value ref.Val
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
	l.read = append(l.read, Variable{Name: name, Value: v})
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
