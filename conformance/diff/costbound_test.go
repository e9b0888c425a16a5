//go:build vapkit_costcheck

package diff

import (
	"flag"
	"testing"

	"github.com/vapkit/vapkit/conformance/gen"
	"github.com/vapkit/vapkit/internal/costcheck"
	"github.com/vapkit/vapkit/policy/casefile"
)

var costCount = flag.Int("cost.count", 3000, "number of generated cases whose cost bounds are checked (300 with -short)")

// TestGeneratedCostBounds evaluates generated cases with vapkit, tracking
// every cost, and checks each measured cost against the estimated bound
// that would have let the expression run untracked (see celenv.Session): a
// bound below a measurement could let an untracked evaluation miss a limit
// the API server enforces.
func TestGeneratedCostBounds(t *testing.T) {
	n := *costCount
	if testing.Short() && n > 300 {
		n = 300
	}
	disable := costcheck.Enable()
	defer disable()
	costcheck.Take()
	before := costcheck.Checked()
	for i := range n {
		seed := *genStart + uint64(i)
		c := gen.Generate(seed)
		cf, err := casefile.Parse(c.YAML, c.Name)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if _, err := cf.Review(t.Context()); err != nil {
			t.Fatalf("seed %d: Review() error = %v", seed, err)
		}
		for _, v := range costcheck.Take() {
			t.Errorf("seed %d (%s): %v\n--- case ---\n%s", seed, c.Name, v, c.YAML)
		}
	}
	checked := costcheck.Checked() - before
	if checked < int64(n) {
		t.Errorf("only %d measured costs had a bound to check in %d cases", checked, n)
	}
	t.Logf("checked %d measured costs against their bounds in %d generated cases", checked, n)
}
