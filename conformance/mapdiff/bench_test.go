package mapdiff

import (
	"context"
	"syscall"
	"testing"

	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// benchCase is the mutating workload: three policies on a Deployment
// CREATE (a label merged by apply configuration, an env var appended to a
// keyed list, a JSON patch on replicas and an annotation), one of them
// IfNeeded, so that the reinvocation pass runs too.
const benchCase = "../../policy/testdata/mutating/bench-three-policies.yaml"

// BenchmarkMutating measures one mutating phase of the benchmark case:
// upstream's dispatcher (with the chain's reinvocation pass) and vapkit's
// Evaluate. Compare with
//
//	go test ./mapdiff -run '^$' -bench Mutating -benchmem -count 6 | benchstat -col /side -
func BenchmarkMutating(b *testing.B) {
	c := parseCase(b, benchCase)
	ctx := context.Background()
	b.Run("side=upstream", func(b *testing.B) {
		vc, err := upstream.ParseCase(c.Rest, c.Name)
		if err != nil {
			b.Fatal(err)
		}
		m, err := NewMutator(ctx, c, vc)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		start := cpuNow()
		for b.Loop() {
			if _, err := m.Run(ctx); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, start)
	})
	b.Run("side=vapkit", func(b *testing.B) {
		s, err := manifest.Load(c.All, c.Name)
		if err != nil {
			b.Fatal(err)
		}
		ev, err := policy.Compile(nil, nil, policy.Options{MutatingPolicies: s.MutatingPolicies, MutatingBindings: s.MutatingBindings,
			Namespaces: matching.NewNamespaceMap(s.Namespaces...)})
		if err != nil {
			b.Fatal(err)
		}
		req, err := policy.RequestFromAdmission(s.Reviews[0].Request)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		start := cpuNow()
		for b.Loop() {
			d, err := ev.Evaluate(ctx, req)
			if err != nil || !d.Allowed || d.Object == nil {
				b.Fatalf("Evaluate() = %v, %v", d, err)
			}
		}
		reportCPU(b, start)
	})
}

// cpuNow is the process's CPU time: on the shared machine wall time mostly
// measures the other processes, CPU time what the benchmark spent.
func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start int64) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
	}
}
