package policy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
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

// evaluateMutatingCase reads a case (MutatingAdmissionPolicies and their
// bindings beside what policy.Load reads) and evaluates its request.
func evaluateMutatingCase(t *testing.T, path string) mutatingOutcome {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var opts policy.Options
	var rest [][]byte
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "MutatingAdmissionPolicy":
			p := &admissionregistrationv1.MutatingAdmissionPolicy{}
			if err := yaml.UnmarshalStrict(doc, p); err != nil {
				t.Fatal(err)
			}
			opts.MutatingPolicies = append(opts.MutatingPolicies, p)
		case "MutatingAdmissionPolicyBinding":
			b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
			if err := yaml.UnmarshalStrict(doc, b); err != nil {
				t.Fatal(err)
			}
			opts.MutatingBindings = append(opts.MutatingBindings, b)
		default:
			rest = append(rest, doc)
		}
	}
	m, err := policy.Load(bytes.Join(rest, []byte("\n---\n")), path)
	if err != nil {
		t.Fatal(err)
	}
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
