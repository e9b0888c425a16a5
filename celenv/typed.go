package celenv

import (
	"fmt"
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// ObjectType declares one named object type for schema-typed compilation
// (type checking). Fields maps CEL field names, already escaped, to their
// types; a field whose type is another object refers to it with
// cel.ObjectType(name).
type ObjectType struct {
	Name   string
	Fields map[string]*types.Type
}

// TypedDecls describes the variables of a schema-typed environment, the one
// the API server's policy type checker builds for each checked kind.
type TypedDecls struct {
	// Object is the type of object and oldObject; nil means dyn.
	Object *types.Type
	// Params declares params (the API server does when the policy's
	// paramKind parses).
	Params bool
	// ParamType is the type of params; nil means dyn.
	ParamType *types.Type
	// Types are the object types Object and ParamType refer to, directly or
	// through their fields. Names must be unique and must not start with
	// "kubernetes.".
	Types []ObjectType
}

// TypedBase is the library part of a type-checking environment: every
// library the API server of the Env's version stores expressions with
// (StoredExpressions), plus the request and namespace object types. Building
// it is expensive; reuse it for many [TypedBase.NewScope] calls. It is
// immutable and safe for concurrent use.
//
// Options.Extra of the Env are not part of it: type checking mirrors the API
// server exactly.
type TypedBase struct {
	env *cel.Env
}

// TypedBase builds the library part of the type-checking environment of e.
func (e *Env) TypedBase() (*TypedBase, error) {
	var opts []cel.EnvOption
	for _, o := range baseOptions() {
		if o.available(e.version) {
			opts = append(opts, o.env...)
		}
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		return nil, fmt.Errorf("building CEL environment: %w", err)
	}
	return &TypedBase{env: env}, nil
}

// TypedScope compiles, for type checking only, the expressions of one policy
// against one set of typed declarations. Its expressions see object,
// oldObject, params (when declared), request, namespaceObject, variables
// and authorizer, but not authorizer.requestResource: the API server's type
// checker omits it, so expressions using it report
// "unexpected failed resolution of 'kubernetes.authorization.Authorizer'".
// A TypedScope is used by one goroutine.
type TypedScope struct {
	env  *cel.Env
	vars *objectType
}

// NewScope returns a scope declaring d.
func (b *TypedBase) NewScope(d TypedDecls) (*TypedScope, error) {
	objs := append(requestTypes(), namespaceTypes()...)
	vars := newObjectType(VariablesTypeName, map[string]*types.Type{})
	objs = append(objs, vars)
	seen := map[string]bool{}
	for _, o := range objs {
		seen[o.name] = true
	}
	for _, t := range d.Types {
		if seen[t.Name] {
			return nil, fmt.Errorf("type %q is declared twice", t.Name)
		}
		seen[t.Name] = true
		fields := make(map[string]*types.Type, len(t.Fields))
		for k, v := range t.Fields {
			fields[k] = v
		}
		objs = append(objs, newObjectType(t.Name, fields))
	}
	p := &keywordFieldProvider{typeProvider: newTypeProvider(b.env.CELTypeProvider(), objs...)}
	dyn := func(t *types.Type) *types.Type {
		if t == nil {
			return types.DynType
		}
		return t
	}
	decls := []cel.EnvOption{
		cel.CustomTypeProvider(p),
		cel.CustomTypeAdapter(p),
		cel.Variable(NamespaceVar, cel.ObjectType(NamespaceTypeName)),
		cel.Variable(RequestVar, cel.ObjectType(RequestTypeName)),
		cel.Variable(ObjectVar, dyn(d.Object)),
		cel.Variable(OldObjectVar, dyn(d.Object)),
		cel.Variable(VariablesVar, cel.ObjectType(VariablesTypeName)),
		cel.Variable(AuthorizerVar, AuthorizerType),
	}
	if d.Params {
		decls = append(decls, cel.Variable(ParamsVar, dyn(d.ParamType)))
	}
	env, err := b.env.Extend(decls...)
	if err != nil {
		return nil, fmt.Errorf("building CEL environment: %w", err)
	}
	return &TypedScope{env: env, vars: vars}, nil
}

// AddVariable type-checks a variable and declares variables.<name> with its
// result type (primitives, lists and maps keep their type; anything else,
// including a variable that does not compile, is dyn), as the API server's
// composition does. Its issues are not reported.
func (s *TypedScope) AddVariable(name, expression string) {
	var out *types.Type
	if ast, iss := s.env.Compile(expression); iss == nil || iss.Err() == nil {
		out = ast.OutputType()
	}
	s.vars.fields[name] = variableFieldType(out)
}

// Check type-checks expression and returns its issues, or nil when it
// compiles. The result type is not constrained.
func (s *TypedScope) Check(expression string) *cel.Issues {
	_, iss := s.env.Compile(expression)
	if iss != nil && iss.Err() != nil {
		return iss
	}
	return nil
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
	if ok || !reservedWords[field] {
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
