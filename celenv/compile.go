package celenv

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// Result types an expression may be required to have.
var (
	// BoolResult is required of validations and match conditions.
	BoolResult = []*cel.Type{cel.BoolType}
	// StringResult is required of message expressions.
	StringResult = []*cel.Type{cel.StringType}
	// StringOrNullResult is required of audit annotation value expressions.
	StringOrNullResult = []*cel.Type{cel.StringType, cel.NullType}
	// AnyResult accepts any type; variables use it.
	AnyResult = []*cel.Type{cel.AnyType}
)

// Decls says which optional variables an expression may use.
type Decls struct {
	// Params declares `params`; the API server declares it exactly when the
	// policy has a paramKind.
	Params bool
	// Authorizer declares `authorizer` and `authorizer.requestResource`.
	// Message expressions are compiled without it.
	Authorizer bool
	// PatchTypes declares the types MutatingAdmissionPolicy mutations
	// build (`Object`, `Object.<path>`, `JSONPatch`) and the
	// `jsonpatch.escapeKey` function, in every version, as the API server
	// declares them for mutation expressions only.
	PatchTypes bool
}

// CompileError is the reason an expression cannot be evaluated. Detail is the
// API server's text, such as "compilation failed: ERROR: <input>:1:8: ...".
type CompileError struct {
	Detail string
	// internal: see [CompileError.Internal].
	internal bool
}

// Error returns Detail.
func (e *CompileError) Error() string { return e.Detail }

// Program is one compiled expression. A Program whose expression failed to
// compile is still usable: evaluating it yields the compile error, as the API
// server does. Programs are immutable and safe for concurrent use.
type Program struct {
	expression string
	prog       cel.Program
	// fast is prog without cost tracking, for batches whose plan proves
	// the limits out of reach.
	fast       cel.Program
	outputType *cel.Type
	err        *CompileError
	// maxCost is the estimated upper bound of the cost for inputs of each
	// size class; math.MaxUint64 when unbounded.
	maxCost        [len(sizeClasses)]uint64
	readsVariables bool
	// readsAuthorizer: the expression, or a variable it reads, uses
	// authorizer or authorizer.requestResource.
	readsAuthorizer bool
	// inputPath: the value is a path into an input variable.
	inputPath bool
	// sizeFree: the cost bound holds whatever the input sizes.
	sizeFree bool
	// paths lead to the input values whose sizes the bounds assume;
	// valuePaths to the values of an inputPath expression.
	paths, valuePaths []*celvalue.Path
}

// Expression returns the source text.
func (p *Program) Expression() string { return p.expression }

// Err returns the compile error, or nil.
func (p *Program) Err() *CompileError {
	if p.err == nil {
		return nil
	}
	return p.err
}

// ReadsAuthorizer reports whether the expression, or a variable it reads,
// uses `authorizer` or `authorizer.requestResource`, so that callers can
// skip building those values for expressions that never look at them.
func (p *Program) ReadsAuthorizer() bool { return p.readsAuthorizer }

// OutputType returns the checked type of the expression, or nil when it did
// not compile.
func (p *Program) OutputType() *cel.Type { return p.outputType }

// Scope compiles the expressions of one policy. Variables added with
// [Scope.AddVariable] become fields of `variables` for the expressions
// compiled after them, in order, as the API server composes them. A Scope is
// built by one goroutine; after the last Compile it is immutable and may be
// shared.
type Scope struct {
	env       *Env
	params    bool
	mode      Mode
	vars      *objectType
	provider  *typeProvider
	envs      map[bool]*cel.Env     // keyed by authorizer
	patchEnvs map[*cel.Env]*cel.Env // envs with Decls.PatchTypes, keyed by the env they extend
	variables map[string]*Program
	order     []string
}

// NewScope starts the compilation of one policy. params says whether the
// policy has a paramKind.
func (e *Env) NewScope(params bool, mode Mode) *Scope {
	return &Scope{env: e, params: params, mode: mode, variables: map[string]*Program{}}
}

// celEnv returns the environment for expressions with the given authorizer
// declaration. Until a variable exists the shared base environments serve;
// the first variable derives environments whose `variables` type is this
// scope's own.
func (s *Scope) celEnv(authorizer bool) (*cel.Env, error) {
	base := s.env.envs[declKey{params: s.params, authorizer: authorizer, mode: s.mode}]
	if s.vars == nil {
		return base, nil
	}
	if env, ok := s.envs[authorizer]; ok {
		return env, nil
	}
	p := newTypeProvider(base.CELTypeProvider(), s.vars)
	env, err := base.Extend(cel.CustomTypeProvider(p), cel.CustomTypeAdapter(p))
	if err != nil {
		return nil, err
	}
	s.envs[authorizer] = env
	return env, nil
}

// AddVariable compiles a variable (with the authorizer declared, as the API
// server does) and makes it visible to later expressions as
// variables.<name>. A compile error is not reported here: it surfaces when an
// expression reads the variable. A later variable of the same name replaces
// an earlier one.
func (s *Scope) AddVariable(name, expression string) *Program {
	p := s.Compile(expression, Decls{Params: s.params, Authorizer: true}, AnyResult)
	if s.vars == nil {
		s.vars = newObjectType(VariablesTypeName, map[string]*types.Type{})
		s.envs = map[bool]*cel.Env{}
	}
	s.vars.fields[name] = variableFieldType(p.outputType)
	if _, seen := s.variables[name]; !seen {
		s.order = append(s.order, name)
	}
	s.variables[name] = p
	return p
}

// Compile compiles one expression whose result must have one of the want
// types. d.Params is ignored: the scope decides whether params exist.
func (s *Scope) Compile(expression string, d Decls, want []*cel.Type) *Program {
	p := &Program{expression: expression}
	env, err := s.compileEnv(d)
	if err != nil {
		p.err = internalError(fmt.Sprintf("unexpected error loading CEL environment: %v", err))
		return p
	}
	ast, iss := env.Compile(expression)
	if iss != nil && iss.Err() != nil {
		p.err = &CompileError{Detail: "compilation failed: " + iss.String()}
		return p
	}
	out := ast.OutputType()
	ok := false
	for _, t := range want {
		if out.IsExactType(t) || cel.AnyType.IsExactType(t) {
			ok = true
			break
		}
	}
	if !ok {
		if len(want) == 1 {
			p.err = &CompileError{Detail: fmt.Sprintf("must evaluate to %v but got %v", want[0].String(), out.String())}
		} else {
			p.err = &CompileError{Detail: fmt.Sprintf("must evaluate to one of %v but got %v", want, out.String())}
		}
		return p
	}
	if s.mode == NewExpressions {
		if p.err = instantiate(env, ast, s.env.version-1); p.err != nil {
			return p
		}
		p.outputType = out
		return p
	}
	opts := append(append([]cel.ProgramOption(nil), s.env.program...), cel.InterruptCheckFrequency(CheckFrequency))
	prog, err := env.Program(ast, opts...)
	if err != nil {
		p.err = internalError("program instantiation failed: " + err.Error())
		return p
	}
	fast, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(CheckFrequency))
	if err != nil {
		p.err = internalError("program instantiation failed: " + err.Error())
		return p
	}
	p.prog, p.fast = prog, fast
	p.outputType = out
	s.estimateCosts(p, env, ast)
	return p
}
