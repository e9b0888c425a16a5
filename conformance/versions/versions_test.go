package versions

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/conformance/gen"
	"github.com/vapkit/vapkit/policy/casefile"
)

var (
	count = flag.Int("versions.count", 2000, "number of generated cases per version (200 with -short)")
	start = flag.Uint64("versions.start", 0, "first seed")
	all   = flag.Bool("versions.all", false, "also compare the versions CI leaves out (1.36)")
)

// corpus returns the testdata cases and n generated ones, and how many are
// testdata.
func corpus(t *testing.T, n int) ([]Case, int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "policy", "testdata", "cases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata cases: %v", err)
	}
	var cases []Case
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, Case{Name: "testdata-" + strings.TrimSuffix(filepath.Base(f), ".yaml"), YAML: data})
	}
	testdata := len(cases)
	for i := range n {
		c := gen.Generate(*start + uint64(i))
		cases = append(cases, Case{Name: fmt.Sprintf("seed-%d", *start+uint64(i)), YAML: c.YAML})
	}
	return cases, testdata
}

// TestVersion1_30 compares vapkit evaluating as Kubernetes 1.30 with the
// 1.30 plugin (k8s.io/apiserver v0.30.14) on every testdata case and the
// generated ones: vapkit's answer must be one of upstream's.
func TestVersion1_30(t *testing.T) {
	n := *count
	if testing.Short() && n > 200 {
		n = 200
	}
	testVersion(t, celenv.Version1_30, n)
}

// TestVersion1_36 compares vapkit at 1.36 with k8s.io/apiserver v0.36.6,
// on demand (-versions.all): CI compares 1.37 (package diff) and the
// oldest supported version.
func TestVersion1_36(t *testing.T) {
	if !*all {
		t.Skip("on demand: -versions.all")
	}
	n := *count
	if testing.Short() && n > 200 {
		n = 200
	}
	testVersion(t, celenv.Version1_36, n)
}

// knownDivergence reports, with why, a divergence of a known class: an
// open defect, logged and counted so that CI keeps failing on new ones.
//
// At 1.30 the server now and then fails to compile an expression that
// reads a variable, typing the variable as another one's type ("found no
// matching overload for 'size' applied to 'bool.()'" for a string
// variable). Which cases hit it changes from run to run (seeds 197 and
// 1403 in two runs of the same code, none in a third), so it depends on
// an order inside the 1.30 server; vapkit compiles such expressions.
func knownDivergence(v celenv.Version, msg string) (string, bool) {
	if v == celenv.Version1_30 && strings.Contains(msg, "compilation failed") && strings.Contains(msg, "found no matching overload") {
		return "1.30 server types a variable by another's type, depending on order", true
	}
	return "", false
}

func testVersion(t *testing.T, v celenv.Version, n int) {
	cases, testdata := corpus(t, n)
	began := time.Now()
	outcomes, err := Run(t.Context(), "..", v, cases)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("upstream %v answered %d cases in %v", v, len(cases), time.Since(began).Round(time.Second))
	env, err := celenv.New(celenv.Options{Version: v})
	if err != nil {
		t.Fatal(err)
	}
	var divergences []string
	for i, c := range cases {
		if msg := compare(t, env, c, outcomes[c.Name]); msg != "" {
			if why, ok := knownDivergence(v, msg); ok {
				t.Logf("known divergence %s at %v (%s): %s", c.Name, v, why, msg)
				continue
			}
			kind := "generated"
			if i < testdata {
				kind = "testdata"
			}
			divergences = append(divergences, fmt.Sprintf("%s case %s: %s", kind, c.Name, msg))
		}
	}
	for i, d := range divergences {
		if i == 5 {
			t.Errorf("... and %d more", len(divergences)-5)
			break
		}
		t.Error(d)
	}
	t.Logf("Kubernetes %v: %d testdata and %d generated cases, %d divergences", v, testdata, len(cases)-testdata, len(divergences))
}

// compare returns "" when vapkit's answer for c is one of upstream's.
func compare(t *testing.T, env *celenv.Env, c Case, up Outcome) string {
	if up.Error != "" {
		return "upstream could not run it: " + up.Error
	}
	vc, err := casefile.Parse(c.YAML, c.Name)
	if err != nil {
		return "casefile.Parse: " + err.Error()
	}
	resp, err := vc.ReviewWith(t.Context(), casefile.Options{Env: env})
	if err != nil {
		return "vapkit: " + err.Error()
	}
	got := casefile.Project(resp)
	projected := make([]casefile.Comparable, len(up.Outcomes))
	for i, o := range up.Outcomes {
		projected[i] = casefile.Project(o)
	}
	if slices.ContainsFunc(projected, func(p casefile.Comparable) bool { return cmp.Equal(p, got) }) {
		return ""
	}
	if len(projected) == 0 {
		return "upstream gave no outcome"
	}
	return fmt.Sprintf("vapkit differs from all %d upstream outcomes (-upstream[0] +vapkit):\n%s\n--- case ---\n%s", len(projected), cmp.Diff(projected[0], got), c.YAML)
}
