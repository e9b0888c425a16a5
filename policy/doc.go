// Package policy compiles Kubernetes ValidatingAdmissionPolicies and their
// bindings into an [Evaluator] and answers admission requests with the
// decision the API server of Kubernetes 1.37 would make.
//
// Compile once, evaluate many times:
//
//	ev, err := policy.Compile(policies, bindings, policy.Options{Params: src, Namespaces: nsGetter})
//	...
//	d, err := ev.Evaluate(ctx, &policy.Request{Operation: admissionv1.Create, ...})
//	if !d.Allowed {
//		fmt.Println(d.Status.Message)
//	}
//
// A [Decision] holds what a client would receive (allowed, the
// metav1.Status, warnings), the audit annotations, and a [PolicyTrace] per
// policy, binding and param that says what matched and what each expression
// returned, at what cost.
//
// Expressions whose estimated worst-case cost for the request's input sizes
// keeps every limit out of reach run without cost tracking, two to three
// times faster, and their trace entries report the estimate
// (ExprTrace.CostEstimated); evaluation falls back to tracking whenever a
// limit could be reached, so decisions are the same. [Options].MeasureCost
// tracks every expression.
//
// # Concurrency
//
// An [Evaluator] never changes after Compile returns and is safe for
// concurrent use. Per-request state (converted objects, the namespace
// lookup, the authorizer's decision cache, cost budgets) lives in each
// Evaluate call. Plug-ins in [Options] must be safe for concurrent use.
// Evaluate never modifies the request, the policies, the bindings or the
// objects plug-ins return. To change policies, compile a new Evaluator and
// swap it, for example through an atomic.Pointer[policy.Evaluator].
//
// # Errors
//
// Compile fails only on unusable input (nil entries, duplicate names);
// problems the API server tolerates are listed by [Evaluator.Issues] and
// behave at evaluation time as they do there. Evaluate returns an error only
// when no decision can be made (invalid request, cancelled context); policy
// errors are part of the Decision, governed by failurePolicy.
//
// # Compatibility
//
// Decisions, messages, status codes, warnings, audit annotations and costs
// follow k8s.io/apiserver v0.37.2. Where the API server's order is
// unspecified (policies, bindings, params listed by a selector), vapkit uses
// name order, so the same input always gives the same one of the answers the
// server may give.
package policy
