package diff

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/conformance/gen"
	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/policy/casefile"
)

var (
	genCount = flag.Int("gen.count", 2000, "number of generated cases to compare (200 with -short)")
	genStart = flag.Uint64("gen.start", 0, "first seed")
)

func TestMain(m *testing.M) {
	upstream.SilenceKlog()
	flag.Parse()
	os.Exit(m.Run())
}

// knownDivergences reads the accepted differences, by case name.
func knownDivergences(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("known-divergences.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Divergences []struct {
			Case   string `json:"case"`
			Reason string `json:"reason"`
		} `json:"divergences"`
	}
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		t.Fatalf("known-divergences.yaml: %v", err)
	}
	out := map[string]string{}
	for _, d := range doc.Divergences {
		if d.Case == "" || strings.TrimSpace(d.Reason) == "" {
			t.Fatalf("known-divergences.yaml: every entry needs a case and a reason: %+v", d)
		}
		out[d.Case] = d.Reason
	}
	return out
}

// compare runs one case through both sides and returns a description of
// the difference, or "" when vapkit's answer is one of upstream's.
func compare(ctx context.Context, name string, data []byte) (string, error) {
	uc, err := upstream.ParseCase(data, name)
	if err != nil {
		return "", fmt.Errorf("upstream.ParseCase: %w", err)
	}
	outs, err := upstream.Outcomes(ctx, uc, 24)
	if err != nil {
		return "", fmt.Errorf("upstream.Outcomes: %w", err)
	}
	vc, err := casefile.Parse(data, name)
	if err != nil {
		return "", fmt.Errorf("casefile.Parse: %w", err)
	}
	first, err := vc.Review(ctx)
	if err != nil {
		return "", fmt.Errorf("vapkit Review: %w", err)
	}
	second, err := vc.Review(ctx)
	if err != nil {
		return "", fmt.Errorf("vapkit Review (again): %w", err)
	}
	got := casefile.Project(first)
	if again := casefile.Project(second); !cmp.Equal(got, again) {
		return "vapkit is not deterministic (-first +second):\n" + cmp.Diff(got, again), nil
	}
	projected := make([]casefile.Comparable, len(outs))
	for i, o := range outs {
		projected[i] = casefile.Project(o)
	}
	if slices.ContainsFunc(projected, func(c casefile.Comparable) bool { return cmp.Equal(c, got) }) {
		return "", nil
	}
	return fmt.Sprintf("vapkit differs from all %d upstream outcomes (-upstream[0] +vapkit):\n%s", len(outs), cmp.Diff(projected[0], got)), nil
}

func TestTestdataCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "policy", "testdata", "cases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata cases: %v", err)
	}
	known := knownDivergences(t)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			diff, err := compare(ctx, name, data)
			if err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				if reason, ok := known[name]; ok {
					t.Skipf("known divergence: %s", reason)
				}
				t.Error(diff)
			}
		})
	}
}

func TestGenerated(t *testing.T) {
	n := *genCount
	if testing.Short() && n > 200 {
		n = 200
	}
	known := knownDivergences(t)
	type failure struct {
		seed uint64
		msg  string
	}
	var (
		mu       sync.Mutex
		failures []failure
		wg       sync.WaitGroup
	)
	work := make(chan uint64)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range work {
				c := gen.Generate(seed)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				diff, err := compare(ctx, c.Name, c.YAML)
				cancel()
				msg := diff
				if err != nil {
					msg = err.Error()
				}
				if msg == "" {
					continue
				}
				if _, ok := known[c.Name]; ok {
					continue
				}
				mu.Lock()
				failures = append(failures, failure{seed, fmt.Sprintf("seed %d (%s): %s\n--- case ---\n%s", seed, c.Name, msg, c.YAML)})
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		work <- *genStart + uint64(i)
	}
	close(work)
	wg.Wait()
	slices.SortFunc(failures, func(a, b failure) int { return int(a.seed) - int(b.seed) })
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... and %d more diverging seeds", len(failures)-5)
			break
		}
		t.Error(f.msg)
	}
	t.Logf("compared %d generated cases (seeds %d..%d), %d divergences", n, *genStart, *genStart+uint64(n)-1, len(failures))
}
