package celenv

import (
	"math"
	"testing"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// TestMixedBoundsCap checks that past maxMixedEntries remembered size
// combinations a new combination is not estimated but runs tracked, while
// remembered ones keep their bounds.
func TestMixedBoundsCap(t *testing.T) {
	estimates := 0
	m := &mixedBounds{estimate: func(byPath map[string]uint64, top uint64) uint64 {
		estimates++
		return 1
	}}
	paths := []*celvalue.Path{{Root: 0, Fields: []string{"spec"}}}
	size := uint64(16)
	for i := range maxMixedEntries {
		// Each size is the rounded one after the previous: distinct keys.
		if b, untracked := m.bound([]uint64{size}, paths); !untracked || b == math.MaxUint64 {
			t.Fatalf("combination %d: bound %d, untracked %v; want an estimate that runs untracked", i, b, untracked)
		}
		size = roundSize(size + 1)
	}
	if estimates != maxMixedEntries {
		t.Fatalf("%d estimates, want %d", estimates, maxMixedEntries)
	}
	if b, untracked := m.bound([]uint64{16}, paths); b != 1 || !untracked {
		t.Errorf("remembered combination: bound %d, untracked %v; want 1, true", b, untracked)
	}
	if b, untracked := m.bound([]uint64{size}, paths); b != math.MaxUint64 || untracked {
		t.Errorf("new combination past the cap: bound %d, untracked %v; want MaxUint64, false", b, untracked)
	}
	if estimates != maxMixedEntries {
		t.Errorf("%d estimates after the cap, want %d", estimates, maxMixedEntries)
	}
}
