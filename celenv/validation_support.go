package celenv

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// ValidationScope type-checks the expressions of one policy the way the API
// server's create and update validation does (k8s.io/kubernetes
// pkg/apis/admissionregistration/validation, validateValidatingAdmissionPolicySpec).
// It differs from a [Scope] in three ways, each mirroring that validation:
//
//   - `variables` is declared only after [ValidationScope.Compose] (or the
//     first [ValidationScope.AddVariable]). Upstream compiles match
//     conditions, and every expression of a policy without variables, with a
//     stateless compiler in which `variables` is an undeclared reference; the
//     composing compiler it uses for the other expressions of a policy with
//     variables declares it, empty, from the start. So check match
//     conditions first, then call Compose when the policy has variables.
//   - The [Mode] is chosen per expression: on update, an expression that the
//     old object already held is checked in [StoredExpressions], the others
//     in [NewExpressions], and both share the declared variables.
//   - It only type-checks (and builds each program once, as upstream's
//     compiler does, to report "program instantiation failed"), and
//     [Options.Extra] is not part of it: the API
//     server knows no extra libraries, so neither does its validation.
//
// A ValidationScope is for one goroutine.
type ValidationScope struct {
	version Version
	params  bool
	// vars is nil until the first variable; then `variables` is declared
	// with this type, whose fields grow as variables are added.
	vars  *objectType
	bases map[Mode]*cel.Env
	envs  map[validationKey]*cel.Env
}

// validationKey selects one environment of a ValidationScope.
type validationKey struct {
	mode             Mode
	authorizer, vars bool
}

// NewValidationScope starts the validation of one policy. params says
// whether the policy has a paramKind; `params` is declared exactly then. Only
// e's version matters; a nil e stands for [DefaultVersion].
func (e *Env) NewValidationScope(params bool) *ValidationScope {
	version := DefaultVersion
	if e != nil {
		version = e.version
	}
	return &ValidationScope{
		version: version,
		params:  params,
		bases:   map[Mode]*cel.Env{},
		envs:    map[validationKey]*cel.Env{},
	}
}

// Compose declares `variables`, with no fields yet, for every expression
// checked from now on. Calling it again has no effect.
func (s *ValidationScope) Compose() {
	if s.vars == nil {
		s.vars = newObjectType(VariablesTypeName, map[string]*types.Type{})
	}
}

// AddVariable calls [ValidationScope.Compose], checks a variable's
// expression (any result type, authorizer declared) in mode, and declares
// variables.<name> for the expressions checked after it with the type the
// check found (dyn when it failed), as upstream's
// CompositedCompiler.CompileAndStoreVariable does. It returns the compile
// error, or nil. A later variable of the same name replaces the earlier
// declaration.
func (s *ValidationScope) AddVariable(name, expression string, mode Mode) *CompileError {
	s.Compose()
	out, err := s.check(expression, Decls{Authorizer: true}, AnyResult, mode)
	s.vars.fields[name] = variableFieldType(out)
	return err
}

// Check type-checks expression in mode and returns the API server's compile
// error, or nil. The result must have one of the want types. d.Params is
// ignored: the scope decides whether params exist.
func (s *ValidationScope) Check(expression string, d Decls, want []*cel.Type, mode Mode) *CompileError {
	_, err := s.check(expression, d, want, mode)
	return err
}

func (s *ValidationScope) check(expression string, d Decls, want []*cel.Type, mode Mode) (*cel.Type, *CompileError) {
	env, err := s.env(validationKey{mode: mode, authorizer: d.Authorizer, vars: s.vars != nil})
	if err != nil {
		return nil, internalError(fmt.Sprintf("unexpected error loading CEL environment: %v", err))
	}
	ast, iss := env.Compile(expression)
	if iss != nil && iss.Err() != nil {
		return nil, &CompileError{Detail: "compilation failed: " + iss.String()}
	}
	out := ast.OutputType()
	for _, t := range want {
		if out.IsExactType(t) || cel.AnyType.IsExactType(t) {
			if err := instantiate(env, ast, s.compat(mode)); err != nil {
				return nil, err
			}
			return out, nil
		}
	}
	if len(want) == 1 {
		return nil, &CompileError{Detail: fmt.Sprintf("must evaluate to %v but got %v", want[0].String(), out.String())}
	}
	return nil, &CompileError{Detail: fmt.Sprintf("must evaluate to one of %v but got %v", want, out.String())}
}

// compat is the version whose libraries mode's environment holds.
func (s *ValidationScope) compat(mode Mode) Version {
	if mode == NewExpressions {
		return s.version - 1
	}
	return s.version
}

// env returns the environment for k, building it on first use. The library
// set is that of [New] for the scope's version and mode, without
// Options.Extra.
func (s *ValidationScope) env(k validationKey) (*cel.Env, error) {
	if env, ok := s.envs[k]; ok {
		return env, nil
	}
	base, ok := s.bases[k.mode]
	if !ok {
		compat := s.compat(k.mode)
		var opts []cel.EnvOption
		for _, o := range baseOptions() {
			if o.available(compat) {
				opts = append(opts, o.env...)
			}
		}
		var err error
		if base, err = cel.NewEnv(opts...); err != nil {
			return nil, err
		}
		s.bases[k.mode] = base
	}
	objs := append(requestTypes(), namespaceTypes()...)
	decls := []cel.EnvOption{
		cel.Variable(ObjectVar, cel.DynType),
		cel.Variable(OldObjectVar, cel.DynType),
		cel.Variable(NamespaceVar, cel.ObjectType(NamespaceTypeName)),
		cel.Variable(RequestVar, cel.ObjectType(RequestTypeName)),
	}
	if k.vars {
		// The provider reads s.vars on every lookup, so variables added
		// later are visible to this environment too.
		objs = append(objs, s.vars)
		decls = append(decls, cel.Variable(VariablesVar, s.vars.celType()))
	}
	if s.params {
		decls = append(decls, cel.Variable(ParamsVar, cel.DynType))
	}
	if k.authorizer {
		decls = append(decls,
			cel.Variable(AuthorizerVar, AuthorizerType),
			cel.Variable(RequestResourceVar, ResourceCheckType))
	}
	provider := newTypeProvider(base.CELTypeProvider(), objs...)
	env, err := base.Extend(append([]cel.EnvOption{cel.CustomTypeProvider(provider), cel.CustomTypeAdapter(provider)}, decls...)...)
	if err != nil {
		return nil, err
	}
	s.envs[k] = env
	return env, nil
}
