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
	all   = flag.Bool("versions.all", false, "also compare the versions CI leaves out (1.31-1.36)")
	only  = flag.String("versions.only", "", "compare this one version CI leaves out (1.31-1.36)")
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
	own, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(own) == 0 {
		t.Fatalf("no cases in testdata: %v", err)
	}
	for _, f := range own {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, Case{Name: "versions-" + strings.TrimSuffix(filepath.Base(f), ".yaml"), YAML: data})
	}
	testdata := len(cases)
	for i := range n {
		c := gen.Generate(*start + uint64(i))
		cases = append(cases, Case{Name: fmt.Sprintf("seed-%d", *start+uint64(i)), YAML: c.YAML})
	}
	return cases, testdata
}

// TestVersion1_30 compares vapkit evaluating as Kubernetes 1.30, the
// oldest supported version, with the 1.30 plugin (k8s.io/apiserver
// v0.30.14) on every testdata case and the generated ones: vapkit's answer
// must be one of upstream's.
func TestVersion1_30(t *testing.T) {
	n := *count
	if testing.Short() && n > 200 {
		n = 200
	}
	testVersion(t, celenv.Version1_30, n)
}

// TestVersionsOnDemand compares vapkit at 1.31 to 1.36 with each version's
// plugin, on demand (-versions.all, or -versions.only=1.33): CI compares
// 1.37 (package diff) and the oldest supported version.
func TestVersionsOnDemand(t *testing.T) {
	if !*all && *only == "" {
		t.Skip("on demand: -versions.all or -versions.only=1.NN")
	}
	n := *count
	if testing.Short() && n > 200 {
		n = 200
	}
	for _, v := range Versions {
		if v == celenv.Version1_30 || (*only != "" && v.String() != *only) {
			continue
		}
		t.Run(v.String(), func(t *testing.T) { testVersion(t, v, n) })
	}
}

func testVersion(t *testing.T, v celenv.Version, n int) {
	cases, testdata := corpus(t, n)
	began := time.Now()
	outcomes, err := Run(t.Context(), v, cases)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("upstream %v answered %d cases in %v", v, len(cases), time.Since(began).Round(time.Second))
	// Before 1.36 the order in which the server compiles policies decides
	// this case (see its comment); the harness must report both outcomes.
	wantOutcomes := 1
	if v < celenv.Version1_36 {
		wantOutcomes = 2
	}
	if got := len(outcomes["versions-variables-across-policies"].Outcomes); got != wantOutcomes {
		t.Errorf("variables-across-policies: upstream %v gave %d outcomes, want %d", v, got, wantOutcomes)
	}
	env, err := celenv.New(celenv.Options{Version: v})
	if err != nil {
		t.Fatal(err)
	}
	var divergences []string
	for i, c := range cases {
		if msg := compare(t, env, c, outcomes[c.Name]); msg != "" {
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
