// Package celenv is the Kubernetes CEL environment of ValidatingAdmissionPolicy
// expressions, as k8s.io/apiserver v0.37.2 builds it: the variables (object,
// oldObject, params, request, namespaceObject, authorizer,
// authorizer.requestResource, variables) with their declared types, every CEL
// library and language option the API server enables, and the runtime cost
// figures that decide when an expression runs out of budget.
//
// [New] builds the environments of one Kubernetes minor version (1.30 to 1.37,
// default 1.37). Each holds two modes, as the API server does:
// [StoredExpressions], the larger environment a server of that version uses to
// evaluate policies (every library it knows), and [NewExpressions], what it
// accepts in new or changed expressions (only libraries a server one minor
// version older knows, so that a rollback keeps working). Compiling in
// NewExpressions answers "would a 1.33 API server accept this policy?":
//
//	env, _ := celenv.New(celenv.Options{Version: celenv.Version1_33})
//	scope := env.NewScope(celenv.ScopeOptions{}).WithMode(celenv.NewExpressions)
//	p := scope.Compile(expr, celenv.Decls{}, cel.BoolType)
//	if err := p.Err(); err != nil { ... } // err.Detail is the API server's text
//
// A [Scope] compiles the expressions of one policy, adding its variables in
// order; a [Batch] evaluates them against one request with a shared cost
// budget and a memo of variable values. [ScopeOptions] choose what a scope
// is for: evaluation (the zero value), type-checking as the API server
// validates created and updated policies (CheckOnly, NoVariables), or
// type-checking against schemas (Typed); [Scope.WithMode] picks the
// environment of each expression.
//
// The `authorizer` variable is backed by an [authz.Authorizer], whose
// checks [AuthorizerValues] binds for one request.
//
// # Cost tracking
//
// The API server tracks the cost of every evaluation, which makes CEL two to
// three times slower, although the figure only matters when a limit is
// reached. Compile therefore also estimates an upper bound of each
// expression's cost, for inputs of unknown size and for inputs whose
// strings, lists and maps hold at most 16, 64, ... 65,536 elements. A batch
// started with a [Session] measures the sizes the estimate depends on,
// those of the values at the paths the expression reads (the number of
// object.spec.template.spec.containers and the length of each of their
// images, say, rather than every string and list of the object), and runs
// the expression untracked when its bound is at most half the per-call
// limit, charging the bound to the budget. When the bound for the largest
// of those sizes everywhere is too large, the expression is estimated
// again for each path's own size (once per combination of sizes, then
// remembered), so that a thousand containers do not make each container's
// two-entry limits map count as a thousand entries long. If those charges would exhaust
// the budget, the batch measures instead: it evaluates what it (and the
// batches it continues, see [Batch.Next]) evaluated so far again, tracked,
// updates their [Batch.Results], and tracks from then on, so every limit
// is decided on measured costs and the values, errors and decisions are
// the API server's either way. Callers never retry. The estimates charge
// what the cost tracker charges (every field selection, the library's
// larger figure where upstream's estimate and charge disagree), and
// vapkit's tests compare every measured cost of the conformance cases and
// of thousands of generated ones with its bound. Untracked programs also
// read chains of field names on typed objects (`object.spec.containers`,
// `c.image`) directly, leaving anything else to cel-go, so that their
// values and errors are cel-go's.
//
// The rules that only matter with schemas live in sub-packages: property
// name escaping in [github.com/vapkit/vapkit/celenv/escaping] and list-type
// semantics in [github.com/vapkit/vapkit/celenv/listtype]. Admission
// policies never use them at runtime, since the API server evaluates
// object, oldObject and params without schemas; type checking uses the
// escaping but not the list types (see the listtype package doc).
//
// # Concurrency
//
// An [Env] and the [Program] values compiled from it are immutable and safe
// for concurrent use. A [Scope] is built by one goroutine and may be shared
// once its last expression is compiled. A [Batch] and a [Session] belong to
// one goroutine.
// Functions without a receiver keep no state.
//
// # Errors
//
// Expressions that fail to compile do not make Compile fail: the returned
// [Program] carries a [CompileError] whose Detail is the API server's text
// ("compilation failed: ERROR: <input>:1:8: ..."), and evaluating it yields
// "compilation error: <detail>", as the API server reports it. Evaluation
// failures of one expression are in [Result].Err with the API server's text
// ("expression '<expr>' resulted in error: <cause>"); [Batch.Eval] returns an
// error only when the whole batch must stop, for instance
// [ErrCostBudgetExceeded]. [New] and [ParseVersion] reject unsupported
// versions.
//
// # Compatibility
//
// Function names, overload IDs, macros, CEL type names, error texts and costs
// match k8s.io/apiserver v0.37.2 evaluated with github.com/google/cel-go
// v0.29.2. For a version v before 1.37, vapkit models an API server of version
// v: its stored environment holds the options introduced by v and not removed
// by v, its new-expressions environment those of v-1, both as listed in the
// 1.37 API server's base environment. Every version uses the 1.37
// implementation of each function and cel-go v0.29.2's checker, except
// where an older server's libraries or cel-go decide differently and
// vapkit does as that server does: containsCIDR before 1.32, the authorizer's
// selectors at 1.31, lists.range at 1.34 to 1.36 (cel-go v0.26.0) and the
// type of a two-variable comprehension's second variable at 1.32 (cel-go
// v0.22.0); the policy package documentation lists them. [Options].Extra
// adds custom libraries, which makes the environment differ from any API
// server.
package celenv
