package celenv

import (
	"fmt"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// Decls says which optional variables and types one expression may use,
// beyond those its [Scope] declares.
type Decls struct {
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
	// Issues are cel-go's issues when the expression did not parse or
	// check, else nil. Their String is the text after "compilation
	// failed: ", which the type checker's warnings quote.
	Issues *cel.Issues
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
	// mixed estimates bounds for paths of different size classes, for
	// programs whose uniform bounds run out (see mixedBounds); nil
	// otherwise.
	mixed *mixedBounds
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

// compile compiles expression in env: its result must have one of the
// want types (any type when want is empty). Scopes that evaluate also get
// the programs and their cost estimates.
func (s *Scope) compile(p *Program, env *cel.Env, want []*cel.Type, legacyResultMessage bool) {
	ast, iss := env.Compile(p.expression)
	var r132 *result132
	if s.env.version == Version1_32 {
		var err error
		if r132, err = s.check132(env, p.expression, ast); err != nil {
			p.err = internalError(fmt.Sprintf("unexpected error loading CEL environment: %v", err))
			return
		}
		if r132 != nil && (r132.issues != nil || r132.protoErr != nil || s.opts.Typed != nil) {
			// Decided by the 1.32 check alone. Otherwise no node has the
			// untyped variable's type, so v0.29.2's check is the same and
			// its ast builds the program.
			ast, iss = nil, r132.issues
		}
	}
	if iss != nil && iss.Err() != nil {
		p.err = &CompileError{Detail: "compilation failed: " + iss.String(), Issues: iss}
		return
	}
	var out *cel.Type
	if ast != nil {
		out = ast.OutputType()
	} else {
		out = r132.out
	}
	if err := checkResult(out, want, legacyResultMessage); err != nil {
		p.err = err
		return
	}
	if ast == nil {
		if s.opts.Typed != nil {
			p.outputType = out
			return
		}
		// The API server's compiler, not its type checker, converts the
		// checked expression (see check132).
		p.err = internalError("unexpected compilation error: " + r132.protoErr.Error())
		return
	}
	if !s.evaluates() {
		// The API server's compiler builds the program in every
		// environment; its type checker only checks.
		compat := s.env.version
		if s.mode == NewExpressions {
			compat--
		}
		if s.opts.Typed == nil {
			p.err = instantiate(env, ast, compat)
		}
		if p.err == nil {
			p.outputType = out
		}
		return
	}
	p.outputType = out
	opts := append(append([]cel.ProgramOption(nil), s.env.program...), cel.InterruptCheckFrequency(checkFrequency))
	prog, err := env.Program(ast, opts...)
	if err != nil {
		p.err = internalError("program instantiation failed: " + err.Error())
		return
	}
	fastOpts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(checkFrequency)}
	if o := typedPathOption(ast); o != nil {
		fastOpts = append(fastOpts, o)
	}
	fast, err := env.Program(ast, fastOpts...)
	if err != nil {
		p.err = internalError("program instantiation failed: " + err.Error())
		return
	}
	p.prog, p.fast = prog, fast
	s.estimateCosts(p, env, ast)
}

// checkResult returns the API server's error for a result of type out
// when want does not allow it. legacy: the message of servers before 1.32,
// which did not say which type they got (k8s.io/apiserver v0.31.14 vs
// v0.32.13 pkg/admission/plugin/cel/compile.go).
func checkResult(out *cel.Type, want []*cel.Type, legacy bool) *CompileError {
	if len(want) == 0 {
		return nil
	}
	for _, t := range want {
		if out.IsExactType(t) || cel.AnyType.IsExactType(t) {
			return nil
		}
	}
	detail := fmt.Sprintf("must evaluate to one of %v", want)
	if len(want) == 1 {
		detail = fmt.Sprintf("must evaluate to %v", want[0].String())
	}
	if !legacy {
		detail += fmt.Sprintf(" but got %v", out.String())
	}
	return &CompileError{Detail: detail}
}
