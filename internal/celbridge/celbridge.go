// Package celbridge gives vapkit's harnesses (the conformance tooling and
// tests) the cel-go environments behind a celenv.Env, which celenv does not
// export: library users compile through celenv.Scope. celenv fills the
// variables in when it is initialised; importing celenv is enough.
package celbridge

import "github.com/google/cel-go/cel"

// Env returns the cel-go environment of env, a *celenv.Env: the
// StoredExpressions one, or the NewExpressions one when newExpressions is
// set, declaring `params` and the authorizer variables when asked
// (`variables` has no fields). Programs built from it need ProgramOptions
// to be costed as the API server costs them.
var Env func(env any, newExpressions, params, authorizer bool) *cel.Env

// ProgramOptions returns the program options the API server uses for
// admission expressions in env, a *celenv.Env: optimisation, cost
// tracking with the Kubernetes call costs, the per-call cost limit and the
// interrupt check frequency.
var ProgramOptions func(env any) []cel.ProgramOption

// CheckFrequency is how many comprehension iterations pass between two
// checks for cancellation.
var CheckFrequency uint
