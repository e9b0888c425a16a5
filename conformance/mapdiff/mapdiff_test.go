package mapdiff

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

var update = flag.Bool("update", false, "record upstream's output in the .expected.json files")

// casesDir holds the hand-written cases, in the root module.
const casesDir = "../../policy/testdata/mutating"

// outcome is what the chain answers: the response fields a client sees
// and, when the mutating policies changed it, the final object.
type outcome struct {
	Allowed          bool              `json:"allowed"`
	Status           *metav1.Status    `json:"status,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
	AuditAnnotations map[string]string `json:"auditAnnotations,omitempty"`
	Object           map[string]any    `json:"object,omitempty"`
}

func parseCase(t testing.TB, path string) *Case {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parseCaseText(t, strings.TrimSuffix(filepath.Base(path), ".yaml"), data)
}

func parseCaseText(t testing.TB, name string, data []byte) *Case {
	t.Helper()
	c, err := ParseCase(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runUpstream runs the mutating dispatcher, then the validating plugin on
// the mutated object.
func runUpstream(t *testing.T, c *Case) outcome {
	t.Helper()
	ctx := context.Background()
	vc, err := upstream.ParseCase(c.Rest, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	mutated, err := MutateUpstream(ctx, c, vc)
	if err != nil {
		return outcome{Status: StatusOf(err)}
	}
	var out outcome
	if vc.Object != nil && mutated != nil && !semanticEqual(t, vc.Object, mutated) {
		out.Object = toMap(t, mutated)
		raw, err := json.Marshal(mutated)
		if err != nil {
			t.Fatal(err)
		}
		vc.Object = mutated
		vc.Request.Object = runtime.RawExtension{Raw: raw}
	}
	if len(vc.Policies) == 0 {
		out.Allowed = true
		return out
	}
	resp, err := upstream.Run(ctx, vc, upstream.Ordering{})
	if err != nil {
		t.Fatal(err)
	}
	out.Allowed, out.Status, out.Warnings, out.AuditAnnotations = resp.Allowed, resp.Result, resp.Warnings, resp.AuditAnnotations
	return out
}

// runVapkit evaluates the case with policy.Evaluate, loading the whole file
// with manifest.Load (which reads the mutating policies too).
func runVapkit(t *testing.T, c *Case) outcome {
	t.Helper()
	mutating, err := manifest.Load(c.All, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Load(c.Rest, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Reviews) != 1 {
		t.Fatalf("%s: want one AdmissionReview, got %d", c.Name, len(m.Reviews))
	}
	src, err := params.NewStatic(m.Objects...)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{
		Params: src, Namespaces: matching.NewNamespaceMap(m.Namespaces...), CRDs: m.CRDs,
		MutatingPolicies: mutating.MutatingPolicies, MutatingBindings: mutating.MutatingBindings,
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := policy.RequestFromAdmission(m.Reviews[0].Request)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range d.Mutations {
		t.Log("vapkit mutation trace: ", tr.String())
	}
	resp := d.AdmissionResponse(m.Reviews[0].Request.UID)
	out := outcome{Allowed: resp.Allowed, Status: resp.Result, Warnings: resp.Warnings, AuditAnnotations: resp.AuditAnnotations}
	if d.Object != nil {
		out.Object = toMap(t, d.Object)
	}
	return out
}

func toMap(t *testing.T, o runtime.Object) map[string]any {
	t.Helper()
	m, err := builtin.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, so that numbers compare as the recorded files hold them.
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func semanticEqual(t *testing.T, a, b runtime.Object) bool {
	return cmp.Equal(toMap(t, a), toMap(t, b))
}

// normalize makes an outcome comparable through JSON.
func normalize(t *testing.T, o outcome) outcome {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var n outcome
	if err := json.Unmarshal(b, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMAPDiff(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(casesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 40 {
		t.Fatalf("%d cases in %s, want at least 40", len(paths), casesDir)
	}
	divergences := 0
	for _, path := range paths {
		c := parseCase(t, path)
		t.Run(c.Name, func(t *testing.T) {
			up := normalize(t, runUpstream(t, c))
			ours := normalize(t, runVapkit(t, c))
			if diff := cmp.Diff(up, ours); diff != "" {
				divergences++
				t.Errorf("(-upstream +vapkit):\n%s", diff)
			}
			exp := strings.TrimSuffix(path, ".yaml") + ".expected.json"
			if *update {
				b, err := json.MarshalIndent(up, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(exp, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(exp)
			if err != nil {
				t.Fatalf("no recorded output (run with -update): %v", err)
			}
			var rec outcome
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(rec, up); diff != "" {
				t.Errorf("upstream no longer gives the recorded output (-recorded +upstream):\n%s", diff)
			}
		})
	}
	t.Logf("%d cases, %d divergences", len(paths), divergences)
}
