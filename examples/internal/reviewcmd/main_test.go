package reviewcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// representativeCases are the shared cases -short runs through the
// command: a denial with warnings and audit annotations, audit only, an
// allowed request, order-dependent outcomes, params, an authorizer, a CRD,
// a missing namespace, a status reason and a typed object.
// The policy package, which owns the cases, runs them all (TestCases);
// the command runs these, in both modes, to test what it adds: reading,
// printing and judging a case.
var representativeCases = []string{
	"actions-audit-only",
	"actions-deny-warn-audit",
	"audit-annotations-joined-across-bindings",
	"authorizer-checks",
	"match-policy-equivalent-crd",
	"multiple-policies-order-dependent",
	"namespace-not-found",
	"params-by-selector",
	"reason-requestentitytoolarge",
	"seed-replica-limit-no-params-allowed",
	"typed-object-representation",
}

// sharedCaseFiles returns the representative case files of
// policy/testdata/cases.
func sharedCaseFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(sharedCases, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	var out []string
	for _, name := range representativeCases {
		f := filepath.Join(sharedCases, name+".yaml")
		if !slices.Contains(files, f) {
			t.Fatalf("representative case %s is not in %s", name, sharedCases)
		}
		out = append(out, f)
	}
	return out
}

// TestReviewReproducesExpected checks that the printed response equals the
// expected file's response (or one of its alternatives) for the shared
// cases.
func TestReviewReproducesExpected(t *testing.T) {
	for _, f := range sharedCaseFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var out bytes.Buffer
			if err := run(t.Context(), []string{f}, &out); err != nil {
				t.Fatalf("run() error = %v", err)
			}
			data, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			var want, got map[string]any
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if oracle, ok := want["oracle"].(map[string]any); ok {
				for _, alt := range oracle["alternatives"].([]any) {
					if cmp.Equal(alt, got["response"]) {
						return
					}
				}
			}
			delete(want, "oracle")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReviewBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: [}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {filepath.Join(dir, "missing.yaml")}, {bad}} {
		if err := run(t.Context(), args, &bytes.Buffer{}); err == nil {
			t.Errorf("run(%q) = nil error, want an error", args)
		}
	}
}
