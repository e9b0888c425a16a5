// Package mutationdiff runs upstream's MutatingAdmissionPolicy patchers
// (k8s.io/apiserver v0.37.2 pkg/admission/plugin/policy/mutating/patch:
// the JSON patcher and the apply-configuration patcher, over client-go's
// type converter of built-in kinds) and vapkit's internal/mutation on the
// same expressions and objects, and reports every difference in the
// mutated object, the error text or the status code.
//
// The cases are testdata/cases.yaml; run `go test ./mutationdiff` from the
// conformance module.
package mutationdiff
