package gen_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vapkit/vapkit/conformance/gen"
	"github.com/vapkit/vapkit/conformance/upstream"
)

var (
	genCount = flag.Int("gen.count", 200, "number of generated cases to run through upstream alone (package diff compares 2,000 with vapkit)")
	genStart = flag.Uint64("gen.start", 0, "first seed")
	genDump  = flag.String("gen.dump", "", "directory to write every generated case to")
)

func TestMain(m *testing.M) {
	upstream.SilenceKlog()
	flag.Parse()
	os.Exit(m.Run())
}

func TestGenerateDeterministic(t *testing.T) {
	tests := []struct {
		name string
		seed uint64
	}{
		{"zero", 0},
		{"one", 1},
		{"large", 1 << 62},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := gen.Generate(tc.seed), gen.Generate(tc.seed)
			if !bytes.Equal(a.YAML, b.YAML) || a.Name != b.Name {
				t.Errorf("Generate(%d) differs between calls", tc.seed)
			}
			if _, err := upstream.ParseCase(a.YAML, a.Name); err != nil {
				t.Errorf("ParseCase(Generate(%d)) = %v, want nil", tc.seed, err)
			}
		})
	}
	if bytes.Equal(gen.Generate(1).YAML, gen.Generate(2).YAML) {
		t.Errorf("Generate(1) = Generate(2), want different cases")
	}
}

type tally struct{ allowed, denied, warned, audited, errored int }

// TestGeneratedCasesRunUpstream runs -gen.count generated cases, from seed
// -gen.start, through the upstream plugin. Each must parse and run, and the
// corpus must not be dominated by plain admissions.
func TestGeneratedCasesRunUpstream(t *testing.T) {
	n := *genCount
	if testing.Short() && n > 200 {
		n = 200
	}
	var (
		mu       sync.Mutex
		failures []string
		counts   tally
		wg       sync.WaitGroup
	)
	work := make(chan uint64)
	for w := 0; w < 2*runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range work {
				msg, outcome := runSeed(seed)
				mu.Lock()
				if msg != "" {
					failures = append(failures, msg)
				} else {
					outcome(&counts)
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- *genStart + uint64(i)
	}
	close(work)
	wg.Wait()
	for i, f := range failures {
		if i == 3 {
			t.Errorf("... and %d more failing seeds", len(failures)-3)
			break
		}
		t.Error(f)
	}
	t.Logf("%d cases: %+v", n, counts)
	if n >= 100 && (counts.denied < n/5 || counts.warned < n/20 || counts.audited < n/20 || counts.errored < n/20) {
		t.Errorf("generated corpus too permissive: %+v of %d", counts, n)
	}
}

// runSeed generates and runs one case; it returns a failure message with
// the case's YAML, or a function that adds the outcome to a tally.
func runSeed(seed uint64) (string, func(*tally)) {
	c := gen.Generate(seed)
	if *genDump != "" {
		if err := os.WriteFile(filepath.Join(*genDump, c.Name+".yaml"), c.YAML, 0o644); err != nil {
			return err.Error(), nil
		}
	}
	parsed, err := upstream.ParseCase(c.YAML, c.Name)
	if err != nil {
		return "ParseCase: " + err.Error() + "\n" + string(c.YAML), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	outs, err := upstream.Outcomes(ctx, parsed, 24)
	if err != nil {
		return "Outcomes: " + strings.TrimSpace(err.Error()) + "\n" + string(c.YAML), nil
	}
	o := outs[0]
	return "", func(t *tally) {
		if o.Allowed {
			t.allowed++
		} else {
			t.denied++
		}
		if len(o.Warnings) > 0 {
			t.warned++
		}
		if len(o.AuditAnnotations) > 0 {
			t.audited++
		}
		if o.Result != nil && (o.Result.Code >= 500 || strings.Contains(o.Result.Message, "failed to configure") ||
			strings.Contains(o.Result.Message, "compilation failed") || strings.Contains(o.Result.Message, "expression '")) {
			t.errored++
		}
	}
}
