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
package typecheck
