// Package bench holds the performance comparison of vapkit with the API
// server's own ValidatingAdmissionPolicy plugin (k8s.io/apiserver v0.37.2)
// and with bare cel-go programs.
//
// Workloads generates the benchmark workloads as conformance cases in the
// shared case format, so that both implementations read exactly the same
// policies, bindings, params, namespaces and request. Each workload carries
// the decision both must reach; the benchmarks assert it on every
// iteration.
//
// The benchmarks live in bench_test.go and run only with -bench, best as
// run.sh runs them, each side once per fresh process so that the sides
// alternate on a machine whose speed drifts:
//
//	sh bench/run.sh > bench.txt && sh bench/compare.sh bench.txt
//
// BenchmarkUpstream/<workload> calls the real plugin's Validate on a
// prepared cluster (fake informers, policies compiled), BenchmarkVapkit/<workload>
// calls policy.Evaluator.Evaluate, BenchmarkFloor/<workload> evaluates the
// same CEL expressions with bare cel-go programs on a prepared activation —
// cost-tracked where vapkit tracks them, untracked where vapkit's cost
// estimates let it skip tracking (the limit of vapkit's design) —,
// BenchmarkFloorTracked/<workload> does the same with every expression
// tracked (the limit of a design that always tracks, as the API server
// does), and BenchmarkCompile/<side>/1000-policies measures compilation.
// RESULTS.md has the numbers and how to reproduce them.
package bench
