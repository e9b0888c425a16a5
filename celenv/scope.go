package celenv

import (
	"fmt"
	"maps"
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/celenv/escaping"
)

// ScopeOptions configure [Env.NewScope]. The zero value compiles the
// expressions of a policy without paramKind for evaluation, as the API
// server's admission plugin does.
type ScopeOptions struct {
	// Params declares `params`; the API server declares it exactly when
	// the policy has a paramKind.
	Params bool
	// CheckOnly type-checks without building programs, as the API
	// server's validation of created and updated policies does: the
	// Programs of the scope report compile errors but cannot be evaluated,
	// and the libraries of [Options].Extra are left out, since the API
	// server knows none.
	CheckOnly bool
	// NoVariables leaves `variables` undeclared until the first
	// [Scope.AddVariable]. The API server's validation checks match
	// conditions, and every expression of a policy without variables, in
	// an environment without it; expressions of a policy with variables
	// see it declared, empty, from the start.
	NoVariables bool
	// Typed declares schema types for object, oldObject and params, as the
	// API server's policy type checker does for each checked kind, and
	// implies CheckOnly. Like that checker, its scopes only type-check
	// (CheckOnly scopes also build each program once, to report
	// "program instantiation failed" as the API server's compiler does)
	// and do not declare authorizer.requestResource.
	Typed *TypedDecls
}

// TypedDecls are the schema types of a [ScopeOptions].Typed scope.
type TypedDecls struct {
	// Object is the type of object and oldObject; nil means dyn.
	Object *types.Type
	// ParamType is the type of params (when ScopeOptions.Params declares
	// it); nil means dyn.
	ParamType *types.Type
	// Types are the object types Object and ParamType refer to, directly
	// or through their fields. Names must be unique and must not start
	// with "kubernetes.".
	Types []ObjectType
}

// ObjectType declares one named object type of a [TypedDecls]. Fields maps
// CEL field names, already escaped, to their types; a field whose type is
// another object refers to it with cel.ObjectType(name).
type ObjectType struct {
	Name   string
	Fields map[string]*types.Type
}

// Scope compiles the expressions of one policy. Variables added with
// [Scope.AddVariable] become fields of `variables` for the expressions
// compiled after them, in order, as the API server composes them. A Scope
// and the views [Scope.WithMode] returns share their variables. A Scope is
// built by one goroutine; after the last Compile it is immutable and may
// be shared.
type Scope struct {
	env  *Env
	opts ScopeOptions
	mode Mode
	*scopeState
}

// scopeState is what the views of one scope share.
type scopeState struct {
	// vars is the type of `variables`: nil until the first variable, then
	// its fields grow as variables are added.
	vars      *objectType
	variables map[string]*Program
	order     []string
	// typed are the object types of a typed scope; typedErr tells why
	// they cannot be declared.
	typed    []*objectType
	typedErr error
	// envs are the environments built so far.
	envs      map[envKey]*cel.Env
	patchEnvs map[*cel.Env]*cel.Env // envs with Decls.PatchTypes, keyed by the env they extend
	envs132   map[*cel.Env]*env132  // envs of check132, keyed by the env they extend
}

// envKey selects one environment of a scope.
type envKey struct {
	mode             Mode
	authorizer, vars bool
}

// NewScope starts the compilation of one policy, in the
// [StoredExpressions] environment; see [Scope.WithMode] for the other. A
// Typed scope whose types clash compiles nothing: every Program reports
// the clash in a [CompileError] without Issues.
func (e *Env) NewScope(opts ScopeOptions) *Scope {
	if opts.Typed != nil {
		opts.CheckOnly = true
	}
	s := &Scope{env: e, opts: opts, scopeState: &scopeState{variables: map[string]*Program{}, envs: map[envKey]*cel.Env{}}}
	if opts.Typed != nil {
		s.typed, s.typedErr = typedObjects(opts.Typed)
	}
	if opts.CheckOnly && !opts.NoVariables {
		// Declared, empty, from the start. (Evaluating scopes use the
		// Env's environments until their first variable.)
		s.vars = newObjectType(variablesTypeName, map[string]*types.Type{})
	}
	return s
}

// WithMode returns a view of s that compiles in mode m and shares s's
// variables: on update, the API server checks an expression the old object
// already held in [StoredExpressions], the others in [NewExpressions].
// Only StoredExpressions programs can be evaluated.
func (s *Scope) WithMode(m Mode) *Scope {
	v := *s
	v.mode = m
	return &v
}

// evaluates reports whether s builds programs.
func (s *Scope) evaluates() bool { return !s.opts.CheckOnly && s.mode == StoredExpressions }

// AddVariable compiles a variable (with the authorizer declared and any
// result type, as the API server does) and makes it visible to later
// expressions as variables.<name>, with the variable's type if it is a
// primitive, list or map, else dyn. A compile error is in the Program's
// Err; evaluating an expression that reads the variable reports it. A
// later variable of the same name replaces an earlier one.
func (s *Scope) AddVariable(name, expression string) *Program {
	p := s.Compile(expression, Decls{Authorizer: true})
	if s.vars == nil {
		s.vars = newObjectType(variablesTypeName, map[string]*types.Type{})
	}
	s.vars.fields[name] = variableFieldType(p.outputType)
	if _, seen := s.variables[name]; !seen {
		s.order = append(s.order, name)
	}
	s.variables[name] = p
	return p
}

// Compile compiles one expression declaring d, whose result must have one
// of the want types; with none, any type will do.
func (s *Scope) Compile(expression string, d Decls, want ...*cel.Type) *Program {
	p := &Program{expression: expression}
	env, err := s.compileEnv(d)
	if err != nil {
		p.err = internalError(fmt.Sprintf("unexpected error loading CEL environment: %v", err))
		return p
	}
	// MutatingAdmissionPolicy arrived in 1.32, after the result-type message
	// gained its "but got"; the older message only applies to validation.
	s.compile(p, env, want, !d.PatchTypes && s.env.version < Version1_32)
	return p
}

// celEnv returns the environment for expressions with the given authorizer
// declaration.
func (s *Scope) celEnv(authorizer bool) (*cel.Env, error) {
	if !s.opts.CheckOnly && !s.opts.NoVariables {
		return s.sharedEnv(authorizer)
	}
	if s.typedErr != nil {
		return nil, s.typedErr
	}
	k := envKey{mode: s.mode, authorizer: authorizer, vars: s.vars != nil}
	if env, ok := s.envs[k]; ok {
		return env, nil
	}
	env, err := s.buildEnv(k)
	if err != nil {
		return nil, err
	}
	s.envs[k] = env
	return env, nil
}

// sharedEnv is celEnv for evaluating scopes: until a variable exists the
// Env's shared environments serve; the first variable derives environments
// whose `variables` type is this scope's own.
func (s *Scope) sharedEnv(authorizer bool) (*cel.Env, error) {
	base := s.env.envs[declKey{params: s.opts.Params, authorizer: authorizer, mode: s.mode}]
	if s.vars == nil {
		return base, nil
	}
	k := envKey{mode: s.mode, authorizer: authorizer, vars: true}
	if env, ok := s.envs[k]; ok {
		return env, nil
	}
	p := newTypeProvider(base.CELTypeProvider(), s.vars)
	env, err := base.Extend(cel.CustomTypeProvider(p), cel.CustomTypeAdapter(p))
	if err != nil {
		return nil, err
	}
	s.envs[k] = env
	return env, nil
}

// buildEnv builds the environment k of a check-only scope (or one without
// variables) from the libraries of its mode. The type provider reads
// s.vars on every lookup, so variables added later are visible to it too.
func (s *Scope) buildEnv(k envKey) (*cel.Env, error) {
	base, err := s.env.library(k.mode, !s.opts.CheckOnly)
	if err != nil {
		return nil, err
	}
	objs := append(requestTypes(), namespaceTypes()...)
	objs = append(objs, s.typed...)
	object, params := types.DynType, types.DynType
	if t := s.opts.Typed; t != nil {
		object, params = orDyn(t.Object), orDyn(t.ParamType)
	}
	decls := []cel.EnvOption{
		cel.Variable(objectVar, object),
		cel.Variable(oldObjectVar, object),
		cel.Variable(namespaceVar, cel.ObjectType(namespaceTypeName)),
		cel.Variable(requestVar, cel.ObjectType(requestTypeName)),
	}
	if k.vars {
		objs = append(objs, s.vars)
		decls = append(decls, cel.Variable(variablesVar, s.vars.celType()))
	}
	if s.opts.Params {
		decls = append(decls, cel.Variable(paramsVar, params))
	}
	if k.authorizer {
		decls = append(decls, cel.Variable(authorizerVar, authorizerType))
		if s.opts.Typed == nil {
			decls = append(decls, cel.Variable(requestResourceVar, resourceCheckType))
		}
	}
	var provider types.Provider = newTypeProvider(base.CELTypeProvider(), objs...)
	if s.opts.Typed != nil {
		provider = &keywordFieldProvider{typeProvider: provider.(*typeProvider)}
	}
	opts := []cel.EnvOption{cel.CustomTypeProvider(provider), cel.CustomTypeAdapter(provider.(types.Adapter))}
	return base.Extend(append(opts, decls...)...)
}

func orDyn(t *types.Type) *types.Type {
	if t == nil {
		return types.DynType
	}
	return t
}

// typedObjects returns the object types of d, which must not clash with
// each other or the admission environment's.
func typedObjects(d *TypedDecls) ([]*objectType, error) {
	seen := map[string]bool{variablesTypeName: true}
	for _, o := range append(requestTypes(), namespaceTypes()...) {
		seen[o.name] = true
	}
	out := make([]*objectType, 0, len(d.Types))
	for _, t := range d.Types {
		if seen[t.Name] {
			return nil, fmt.Errorf("type %q is declared twice", t.Name)
		}
		seen[t.Name] = true
		out = append(out, newObjectType(t.Name, maps.Clone(t.Fields)))
	}
	return out, nil
}

// keywordFieldProvider resolves a reserved word used as a field name to the
// escaped field (obj.namespace finds __namespace__), as the API server's
// schema type provider does for compatibility versions 1.31 and later.
type keywordFieldProvider struct {
	*typeProvider
}

// FindStructFieldType implements types.Provider.
func (p *keywordFieldProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	ft, ok := p.typeProvider.FindStructFieldType(name, field)
	if ok || !escaping.IsReservedWord(field) {
		return ft, ok
	}
	if _, own := p.objects[name]; !own {
		return nil, false
	}
	return p.typeProvider.FindStructFieldType(name, "__"+field+"__")
}

// FindStructFieldNames implements types.Provider with sorted names.
func (p *keywordFieldProvider) FindStructFieldNames(name string) ([]string, bool) {
	names, ok := p.typeProvider.FindStructFieldNames(name)
	if ok {
		sort.Strings(names)
	}
	return names, ok
}
