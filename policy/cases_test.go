package policy_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vapkit/vapkit/policy/casefile"
)

// TestCases runs every case of testdata/cases through Evaluate and compares
// the response with the expected file (any listed alternative is accepted
// for order-dependent cases).
func TestCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases found")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			if why := slowCase(name); why != "" {
				t.Skip(why)
			}
			t.Parallel()
			c, err := casefile.ParseFile(f)
			if err != nil {
				t.Fatalf("ParseFile() error = %v", err)
			}
			data, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			want, err := casefile.ParseExpected(data)
			if err != nil {
				t.Fatalf("ParseExpected() error = %v", err)
			}
			resp, err := c.Review(t.Context())
			if err != nil {
				t.Fatalf("Review() error = %v", err)
			}
			if string(resp.UID) != string(want.Response.UID) {
				t.Errorf("uid = %q, want %q", resp.UID, want.Response.UID)
			}
			got := casefile.Project(resp)
			outcomes := want.Outcomes()
			if slices.ContainsFunc(outcomes, func(o casefile.Comparable) bool { return cmp.Equal(o, got) }) {
				return
			}
			t.Errorf("response mismatch (-want +got):\n%s", cmp.Diff(outcomes[0], got))
		})
	}
}

// slowCase says why the case called name is too slow for this run, or ""
// when it runs. Under the race detector, which slows CEL fifty-fold, the
// cost-* cases spend whole cost limits for minutes. With -short,
// cost-total-budget is left out: it spends the whole runtime budget
// (seconds: cel-go's cost tracker is quadratic in comprehension steps).
// CI runs every case without -short.
func slowCase(name string) string {
	switch {
	case raceEnabled && strings.HasPrefix(name, "cost-"):
		return "spends whole cost limits; too slow under the race detector, runs without it"
	case testing.Short() && name == "cost-total-budget":
		return "spends the whole runtime cost budget; runs without -short"
	}
	return ""
}
