// Package gen generates random but realistic ValidatingAdmissionPolicy
// conformance cases in the shared case format (multi-document YAML, see
// shared/conformance/README.md).
//
// Generate is a pure function of its seed: the same seed always yields the
// same bytes, so a failing seed can be reproduced and its YAML added to the
// project's testdata as is. Each case draws a request (every operation,
// built-in and custom kinds, subresources, CONNECT), namespaces with labels,
// parameter objects (custom kinds with and without their CRD, ConfigMaps),
// one to three policies (rules with wildcards and subresources, selectors,
// exclusions, matchPolicy, failurePolicy, matchConditions, variables,
// validations with messages, messageExpressions and reasons, audit
// annotations, paramKind) and their bindings (validationActions, paramRef by
// name or selector, parameterNotFoundAction, matchResources), plus
// authorizer rules. Expressions come from a grammar of templates over the
// request's object that exercises the Kubernetes CEL libraries, runtime and
// compile errors, cost limits and null handling, so that a good share of
// cases deny, warn, audit or fail rather than admit.
//
// # Running
//
// The tests in this package generate cases and run them through the real
// upstream plugin (package upstream); a seed whose case fails prints its YAML.
//
//	go test ./gen                                   # seeds 0..199 (package diff compares 0..1999 with vapkit)
//	go test ./gen -short                            # seeds 0..199
//	go test ./gen -run TestGeneratedCasesRunUpstream -gen.count=100000 -timeout=0
//	go test ./gen -run TestGeneratedCasesRunUpstream -gen.start=5000 -gen.count=10 -gen.dump=/tmp/cases
package gen
