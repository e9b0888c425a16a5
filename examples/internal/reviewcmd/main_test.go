package reviewcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReviewReproducesExpected checks that the printed response equals the
// expected file's response for every case that is not order-dependent.
func TestReviewReproducesExpected(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "policy", "testdata", "cases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if raceEnabled && strings.HasPrefix(filepath.Base(f), "cost-") {
				t.Skip("spends whole cost budgets; too slow under the race detector, runs without it")
			}
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
