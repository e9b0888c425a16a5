// Package typecheck reproduces, offline, the type checking the Kubernetes
// API server's ValidatingAdmissionPolicy status controller performs: it
// compiles each validation expression and messageExpression of a policy
// against the OpenAPI schema of every kind the policy matches and returns
// the status.typeChecking.expressionWarnings the API server would write
// ([Check], [Checker]).
//
// Schemas of every built-in kind of k8s.io/api v0.37.2 are embedded
// ([BuiltinResolver]); they are generated with kube-openapi's openapi-gen
// by `go generate` (see internal/gen). Custom kinds can be checked against
// the openAPIV3Schema of CustomResourceDefinitions ([NewCRDResolver],
// [CheckExtended]); those results are kept apart from the upstream-equal
// ones.
//
// Type checking never changes admission decisions; it only reports
// expressions that cannot work for a matched kind, such as object.replicas
// on a Deployment.
//
// [ValidatePolicy], [ValidatePolicyUpdate] and [ValidateBinding] return the
// errors the API server's create and update validation reports, as a
// field.ErrorList with the server's paths and messages.
//
// # Concurrency
//
// A [Checker] and the resolvers are immutable once built and safe for
// concurrent use; the functions modify nothing passed to them.
//
// # Errors
//
// Type-checking problems are results, not Go errors: Check returns the
// warnings the API server would store, and kinds whose schema cannot be
// resolved are skipped as the server skips them. Resolvers wrap
// [ErrSchemaNotFound]. Validation problems come back as field.ErrorList.
//
// # Compatibility
//
// The warnings equal those of k8s.io/apiserver v0.37.2
// (pkg/admission/plugin/policy/validating/typechecking.go) byte for byte,
// except that type names carry no nanosecond suffix. The validation follows
// k8s.io/kubernetes pkg/apis/admissionregistration/validation for
// Kubernetes 1.37.
package typecheck
