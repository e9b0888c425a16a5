// Package apivalidation holds the API server's create and update validation
// of ValidatingAdmissionPolicies and their bindings (k8s.io/kubernetes
// pkg/apis/admissionregistration/validation), with upstream's field paths
// and messages.
//
// It is internal so that both the evaluator (policy, which must not pull in
// the OpenAPI schema machinery of typecheck) and typecheck, which exports it
// as [github.com/vapkit/vapkit/typecheck.ValidatePolicy] and friends, share
// one implementation of "the server would refuse this".
package apivalidation
