// Package mapdiff compares vapkit's mutate-then-validate evaluation with the
// API server's: k8s.io/apiserver v0.37.2's MutatingAdmissionPolicy
// dispatcher (with the chain's single reinvocation pass, client-go's
// type converter of built-in kinds, kube-apiserver 1.37's defaulting
// functions from k8s.io/kubernetes v1.37.2 after every mutation) followed by the
// upstream ValidatingAdmissionPolicy plugin on the mutated object, as a real
// API server chains them.
//
// The cases are the hand-written MAP cases of policy/testdata/mutating,
// whose <name>.expected.json files hold upstream's recorded output;
// `go test ./mapdiff -update` records them again. Every case must give the
// same final object, patch-relevant content, status, warnings and audit
// annotations on both sides.
//
// The upstream mutating half is exported for other harnesses (the MAP
// workloads of conformance/bench): [ParseCase] splits a case into its
// mutating policies and the rest, [NewMutator] sets up upstream's
// dispatcher on it and [Mutator.Run] admits the case's request once.
package mapdiff
