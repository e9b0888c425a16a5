package bench

import (
	"context"
	"testing"

	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/policy"
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
			evaluated := 0
			for _, tr := range d.Trace {
				if tr.Binding != "" && (tr.Outcome == policy.Passed || tr.Outcome == policy.Failed) {
					evaluated++
				}
			}
			if evaluated != w.Evaluated {
				t.Errorf("Evaluate() evaluated %d (policy, binding, param) triples, the workload states %d", evaluated, w.Evaluated)
			}
		})
	}
	for _, w := range Workloads() {
		if w.Name != "one-policy" && w.Name != "cluster-10" && w.Name != "update-1-containers" {
			continue
		}
		t.Run("upstream/"+w.Name, func(t *testing.T) {
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
				t.Errorf("upstream.Run() allowed = %v (%v), want %v", resp.Allowed, resp.Result, w.Allowed)
			}
		})
	}
}

// TestClusterShape checks that the cluster workloads hold the policies and
// bindings their shape states.
func TestClusterShape(t *testing.T) {
	for _, n := range []int{10, 100, 1000, 10000} {
		s := shapeFor(n)
		ps := clusterPolicies(s)
		bindings := 0
		for _, p := range ps {
			bindings += len(p.bindings)
		}
		wantBindings := 3*s.applying + s.bindings*(n-s.applying)
		if len(ps) != n || bindings != wantBindings {
			t.Errorf("cluster-%d: %d policies, %d bindings; want %d, %d", n, len(ps), bindings, n, wantBindings)
		}
		if n == 100 && (s.byNamespace != 54 || s.byObject != 18 || s.byOperation != 9 || s.byResource != 9) {
			t.Errorf("shapeFor(100) = %+v, want 54 by namespace, 18 by object, 9 by operation, 9 by resource", s)
		}
	}
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
