// Package vapkit evaluates Kubernetes ValidatingAdmissionPolicies outside the
// API server and returns the decision the API server would make.
//
// The packages are:
//
//   - [github.com/vapkit/vapkit/policy]: compile policies and bindings once
//     into an immutable Evaluator and answer admission requests with it.
//   - [github.com/vapkit/vapkit/policy/manifest]: read manifests (YAML or
//     JSON) into the objects the other packages take, without the evaluator.
//   - [github.com/vapkit/vapkit/policy/casefile]: the test harness of the
//     case format (a cluster and a request in one file, the expected
//     response), above the evaluator.
//   - [github.com/vapkit/vapkit/matching]: which requests a policy or binding
//     applies to.
//   - [github.com/vapkit/vapkit/celenv]: the Kubernetes CEL environment,
//     its libraries and cost accounting.
//   - [github.com/vapkit/vapkit/params]: parameter resolution.
//   - [github.com/vapkit/vapkit/audit]: audit annotations and validation
//     failure records.
//   - [github.com/vapkit/vapkit/typecheck]: static checking of expressions.
//
// The behaviour follows k8s.io/apiserver v0.37.2 (Kubernetes 1.37).
package vapkit
