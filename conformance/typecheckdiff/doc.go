// Package typecheckdiff compares vapkit's ValidatingAdmissionPolicy type
// checker (github.com/vapkit/vapkit/typecheck) with the API server's own
// (k8s.io/apiserver v0.37.2, validating.TypeChecker).
//
// Both checkers read the same schemas — vapkit's embedded built-in
// definitions, with $refs inlined by vapkit on one side and by upstream's
// resolver.PopulateRefs on the other; for apiextensions.k8s.io and
// apiregistration.k8s.io the upstream side reads the definitions
// k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator generate
// themselves — and map resources to kinds through
// the same table ([manifest.NewResourceMapper]). Their
// status.typeChecking.expressionWarnings must then agree byte for byte,
// except for the names of the schema types: upstream appends the current
// nanosecond to each kind (Deployment123456789.spec), vapkit does not
// (Deployment.spec, or DeploymentParams for a paramKind named like the
// checked kind); [Normalize] removes that difference.
//
// The tests run every policy of policy/testdata/cases and of this package's
// testdata through both checkers:
//
//	go test ./typecheckdiff
//	go test ./typecheckdiff -run TestCorpus/testdata/ -v
package typecheckdiff
