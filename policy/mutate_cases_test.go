package policy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// mutatingOutcome is the layout of testdata/mutating/*.expected.json, which
// hold the API server's answers recorded by conformance/mapdiff.
type mutatingOutcome struct {
	Allowed          bool              `json:"allowed"`
	Status           *metav1.Status    `json:"status,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Object           map[string]any    `json:"object,omitempty"`
}

// TestMutatingCases evaluates every case of testdata/mutating and compares
// the answer and the mutated object with upstream's recorded output.
func TestMutatingCases(t *testing.T) {
	paths, err := filepath.Glob("testdata/mutating/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 40 {
		t.Fatalf("%d cases, want at least 40", len(paths))
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := evaluateMutatingCase(t, path)
			b, err := os.ReadFile(strings.TrimSuffix(path, ".yaml") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			var want mutatingOutcome
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-upstream +vapkit):\n%s", diff)
			}
		})
	}
}

// evaluateMutatingCase reads a case with manifest.LoadFiles and evaluates
// its request.
func evaluateMutatingCase(t *testing.T, path string) mutatingOutcome {
	t.Helper()
	m, err := manifest.LoadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := policy.Options{MutatingPolicies: m.MutatingPolicies, MutatingBindings: m.MutatingBindings}
	if opts.Params, err = params.NewStatic(m.Objects...); err != nil {
		t.Fatal(err)
	}
	opts.Namespaces, opts.CRDs = matching.NewNamespaceMap(m.Namespaces...), m.CRDs
	ev, err := policy.Compile(m.Policies, m.Bindings, opts)
	if err != nil {
		t.Fatal(err)
	}
	req, err := policy.RequestFromAdmission(m.Reviews[0].Request)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ev.Evaluate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	resp := d.AdmissionResponse(m.Reviews[0].Request.UID)
	out := mutatingOutcome{Allowed: resp.Allowed, Status: resp.Result, Warnings: resp.Warnings, AuditAnnotations: resp.AuditAnnotations}
	if d.Object != nil {
		u, err := builtin.ToUnstructured(d.Object)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &out.Object); err != nil {
			t.Fatal(err)
		}
	}
	// Through JSON, as the recorded files hold it.
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var n mutatingOutcome
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMutatingConcurrent evaluates one case with mutating policies from
// several goroutines on one Evaluator; every decision must equal the
// first. Run with -race.
func TestMutatingConcurrent(t *testing.T) {
	m, err := manifest.LoadFiles("testdata/mutating/bench-three-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policy.Compile(nil, nil, policy.Options{MutatingPolicies: m.MutatingPolicies, MutatingBindings: m.MutatingBindings,
		Namespaces: matching.NewNamespaceMap(m.Namespaces...)})
	if err != nil {
		t.Fatal(err)
	}
	req, err := policy.RequestFromAdmission(m.Reviews[0].Request)
	if err != nil {
		t.Fatal(err)
	}
	first, err := ev.Evaluate(t.Context(), req)
	if err != nil || first.Patch == nil {
		t.Fatalf("Evaluate() = %v, %v", first, err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 10 {
				d, err := ev.Evaluate(t.Context(), req)
				if err != nil {
					errs <- err
					return
				}
				if string(d.Patch) != string(first.Patch) {
					errs <- fmt.Errorf("patch %s, want %s", d.Patch, first.Patch)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
