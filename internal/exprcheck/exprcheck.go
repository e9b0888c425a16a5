// Package exprcheck adapts the CEL environment to the expression checks of
// internal/apivalidation: the API server's create and update validation
// type-checks every expression of a policy in check-only environments,
// and both the evaluator (for Issues and Refusals) and the type checker
// need that same adapter.
package exprcheck

import (
	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// Compiler returns the apivalidation.Compiler that checks expressions in
// env with check-only scopes, as the API server checks new objects.
func Compiler(env *celenv.Env) apivalidation.Compiler { return compiler{env} }

type compiler struct{ env *celenv.Env }

func (c compiler) NewScope(params bool) apivalidation.Scope {
	return &scope{env: c.env, params: params,
		s: c.env.NewScope(celenv.ScopeOptions{Params: params, CheckOnly: true, NoVariables: true})}
}

// scope checks without `variables` until Compose, then with it: the
// server declares `variables` only for policies that have some.
type scope struct {
	env      *celenv.Env
	params   bool
	composed bool
	s        *celenv.Scope
}

func (s *scope) Compose() {
	if !s.composed {
		s.composed = true
		s.s = s.env.NewScope(celenv.ScopeOptions{Params: s.params, CheckOnly: true})
	}
}

func (s *scope) AddVariable(name, expression string, stored bool) error {
	s.Compose()
	return asError(s.s.WithMode(mode(stored)).AddVariable(name, expression).Err())
}

func (s *scope) Check(kind apivalidation.ExprKind, expression string, stored bool) error {
	d, want := celenv.Decls{Authorizer: true}, []*cel.Type{cel.BoolType}
	switch kind {
	case apivalidation.MessageExpression:
		d, want = celenv.Decls{}, []*cel.Type{cel.StringType}
	case apivalidation.AuditAnnotation:
		want = []*cel.Type{cel.StringType, cel.NullType}
	case apivalidation.ApplyConfiguration:
		d, want = celenv.Decls{Authorizer: true, PatchTypes: true}, []*cel.Type{patchtypes.ObjectType}
	case apivalidation.JSONPatch:
		d, want = celenv.Decls{Authorizer: true, PatchTypes: true}, []*cel.Type{patchtypes.JSONPatchListType}
	}
	return asError(s.s.WithMode(mode(stored)).Compile(expression, d, want...).Err())
}

// asError keeps a nil *CompileError from becoming a non-nil error.
func asError(err *celenv.CompileError) error {
	if err == nil {
		return nil
	}
	return err
}

// mode is the environment the API server checks an expression in:
// StoredExpressions when the old object of an update already held it.
func mode(stored bool) celenv.Mode {
	if stored {
		return celenv.StoredExpressions
	}
	return celenv.NewExpressions
}
