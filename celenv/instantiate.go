package celenv

import (
	"github.com/google/cel-go/cel"
)

// Internal reports whether the API server classifies e as an internal
// error rather than an invalid expression: a program that type-checks but
// cannot be instantiated ("program instantiation failed: ..."), or an
// environment that cannot be loaded. Its create and update validation
// reports such an error as field.InternalError ("Internal error: ...")
// instead of field.Invalid (k8s.io/kubernetes
// pkg/apis/admissionregistration/validation, convertCELErrorToValidationError).
func (e *CompileError) Internal() bool { return e != nil && e.internal }

// internalError returns an internal CompileError with detail.
func internalError(detail string) *CompileError {
	return &CompileError{Detail: detail, internal: true}
}

// programOptionsAt returns the program options of the base environment
// evaluated at compat, as k8s.io/apiserver pkg/cel/environment bundles them
// with the environment (an envLoader library), so that every program built
// from an environment of that version carries them.
func programOptionsAt(compat Version) []cel.ProgramOption {
	var opts []cel.ProgramOption
	for _, o := range baseOptions(compat) {
		if o.available(compat) {
			opts = append(opts, o.program...)
		}
	}
	return opts
}

// instantiate builds the program of a checked ast the way the API server's
// compiler does after type checking (k8s.io/apiserver
// pkg/admission/plugin/cel/compile.go, CompileCELExpression), in every
// environment: creation-time validation included. Type checking alone
// accepts expressions whose program cannot be built, such as a constant
// regular expression that does not compile ('abc'.find('[')), which the
// regex library compiles at instantiation; upstream rejects them with
// "program instantiation failed". compat is the version the environment
// was built for (one minor lower than the server for new expressions).
func instantiate(env *cel.Env, ast *cel.Ast, compat Version) *CompileError {
	opts := append(programOptionsAt(compat), cel.InterruptCheckFrequency(checkFrequency))
	if _, err := env.Program(ast, opts...); err != nil {
		return internalError("program instantiation failed: " + err.Error())
	}
	return nil
}
