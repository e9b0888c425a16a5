package bench

import (
	"context"
	"testing"

	"github.com/vapkit/vapkit/conformance/upstream"
)

// TestWorkloadDecisions checks that vapkit reaches each small workload's
// decision, and upstream the first one's, so that a broken workload is
// found without running the benchmarks. The large workloads are checked by
// the benchmarks themselves.
func TestWorkloadDecisions(t *testing.T) {
	for _, w := range Workloads() {
		if w.Policies > 100 {
			continue
		}
		t.Run(w.Name, func(t *testing.T) {
			ev, req, _ := vapkitSetup(t, w)
			d, err := ev.Evaluate(context.Background(), req)
			if err != nil {
				t.Fatalf("Evaluate() error = %v", err)
			}
			if got := statusMessage(d); d.Allowed != w.Allowed || got != w.Message {
				t.Errorf("Evaluate() = allowed %v, %q; want allowed %v, %q", d.Allowed, got, w.Allowed, w.Message)
			}
		})
	}
	t.Run("upstream/one-policy", func(t *testing.T) {
		w := Workloads()[0]
		data, err := w.Case()
		if err != nil {
			t.Fatal(err)
		}
		c, err := upstream.ParseCase(data, w.Name)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := upstream.Run(context.Background(), c, upstream.Ordering{})
		if err != nil {
			t.Fatalf("upstream.Run() error = %v", err)
		}
		if resp.Allowed != w.Allowed {
			t.Errorf("upstream.Run() allowed = %v, want %v", resp.Allowed, w.Allowed)
		}
	})
}

func TestCompileCase(t *testing.T) {
	for _, n := range []int{1, 25} {
		data, err := CompileCase(n)
		if err != nil {
			t.Fatalf("CompileCase(%d) error = %v", n, err)
		}
		c, err := upstream.ParseCase(data, "compile")
		if err != nil {
			t.Fatalf("ParseCase(CompileCase(%d)) error = %v", n, err)
		}
		if got := len(c.Policies); got != n {
			t.Errorf("len(CompileCase(%d).Policies) = %d, want %d", n, got, n)
		}
	}
}
