// Package bench holds the performance comparison of vapkit with the API
// server's own ValidatingAdmissionPolicy plugin (k8s.io/apiserver v0.37.2)
// and with an independent CEL floor.
//
// Workloads generates the benchmark workloads as conformance cases in the
// shared case format, so that both implementations read exactly the same
// policies, bindings, params, namespaces and request. Each workload states
// its shape (what the request is, how many policies apply and why the
// others do not) and carries the decision every side must reach; the
// benchmarks assert it on every iteration. The cluster workloads bind each
// policy once per tenant with namespace and object selectors, as
// multi-tenant clusters do.
//
// The benchmarks live in bench_test.go and run only with -bench, best as
// run.sh runs them, each side in its own fresh process with the order of
// the sides alternating, so that a machine whose speed drifts biases no
// side:
//
//	sh bench/run.sh > bench.txt && sh bench/compare.sh bench.txt
//
// BenchmarkUpstream/<workload> calls the real plugin's Validate on a
// prepared cluster (fake informers, policies compiled),
// BenchmarkVapkit/<workload> calls policy.Evaluator.Evaluate, and
// BenchmarkFloor/<workload> evaluates the CEL programs the API server
// evaluates for the request, compiled once with the upstream plugin's own
// compiler and cost tracking, on activations prepared before the loop.
// <workload>-parallel variants run on every core. The MAP workloads
// (MutatingWorkloads; map-<name> sub-benchmarks of the same three
// functions) put MutatingAdmissionPolicies in front of the validating
// ones: upstream's side is its MAP dispatcher through conformance/mapdiff's
// harness followed by the validating plugin on the mutated object, and
// both sides compare the object they end with to upstream's on every
// iteration.
// BenchmarkCompile/<side>/1000-policies measures compilation. Every
// benchmark reports cpu-ns/op, the process's CPU time per request.
// BenchmarkFixedCost/<workload> (in fixedcost_test.go) measures vapkit's
// fixed cost: its time per request minus that of the bare CEL (the same
// expressions with plain cel-go, untracked, on variables converted to CEL
// values beforehand), both halves timed within each iteration.
// RESULTS.md has the numbers and how to reproduce them.
package bench
