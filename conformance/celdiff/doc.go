// Package celdiff compares vapkit's Kubernetes CEL environment
// (github.com/vapkit/vapkit/celenv) with the API server's own
// (k8s.io/apiserver v0.37.2): the functions, overloads and macros each
// version offers, and the value, error text and cost of every Kubernetes
// library function on representative and edge inputs.
//
// The package holds only tests; run them with `go test` in the conformance
// module.
package celdiff
