// Package apivalidation holds the API server's create and update validation
// of ValidatingAdmissionPolicies and their bindings (k8s.io/kubernetes
// pkg/apis/admissionregistration/validation for Kubernetes 1.37), with
// upstream's field paths and messages.
//
// It is internal so that both the evaluator (policy, which must not pull in
// the OpenAPI schema machinery of typecheck) and typecheck, which exports it
// as [github.com/vapkit/vapkit/typecheck.ValidatePolicy] and friends, share
// one implementation of "the server would refuse this". It type-checks
// expressions through a small [Compiler] interface instead of importing the
// CEL environment, so that it stays below the public packages that use it:
// each adapts a check-only celenv.Scope. Callers apply the server's
// defaults first; this package only validates and never modifies its
// arguments.
package apivalidation
