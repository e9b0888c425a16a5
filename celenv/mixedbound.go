package celenv

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// maxMixedPaths bounds the paths of a program whose bounds are estimated
// per path (see mixedBounds); programs reading more are sized by their
// largest input only.
const maxMixedPaths = 8

// maxMixedEntries bounds the combinations of sizes a program remembers
// bounds for; past it, a new combination is not estimated (an estimate
// retypes the AST under the program's lock) and the program runs tracked,
// which is always exact.
const maxMixedEntries = 64

// mixedBounds estimates a program's cost bound for inputs whose sizes
// differ from path to path. The uniform classes Compile estimates give
// every path the class of the largest input: an expression iterating over
// a thousand containers and looking into each one's limits map would be
// estimated for limits maps of a thousand entries, far above the per-call
// limit, and be cost-tracked. Giving each path a bound of its own bounds
// the cost as soundly, since the estimate asks for the size of each value
// by its path (see pathSet). The bounds are each path's size rounded up to
// three significant bits (at most 12.5% above it), estimated on the first
// request that needs them and remembered.
type mixedBounds struct {
	// estimate returns the bound for inputs with the given size bound per
	// path key (see celvalue.PathKey) and top, the largest of them.
	estimate func(byPath map[string]uint64, top uint64) uint64

	mu     sync.RWMutex
	bounds map[string]uint64
}

// roundSize rounds n up to a number with at most three significant bits
// (16 at least), so that sizes close to each other share an estimate.
func roundSize(n uint64) uint64 {
	if n <= 16 {
		return 16
	}
	if n > math.MaxUint64>>4 {
		return math.MaxUint64
	}
	step := uint64(1) << (bits.Len64(n-1) - 3)
	return (n + step - 1) / step * step
}

// bound returns the bound for paths whose values have at most the given
// sizes and whether it lets the program run untracked.
func (m *mixedBounds) bound(sizes []uint64, paths []*celvalue.Path) (uint64, bool) {
	var key [maxMixedPaths * 8]byte
	for i, n := range sizes {
		sizes[i] = roundSize(n)
		binary.LittleEndian.PutUint64(key[i*8:], sizes[i])
	}
	k := key[:len(sizes)*8]
	m.mu.RLock()
	b, ok := m.bounds[string(k)]
	m.mu.RUnlock()
	if ok {
		return b, b <= untrackedLimit
	}
	// The estimate retypes the program's AST while it runs (see
	// countSelects): one at a time.
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok = m.bounds[string(k)]; !ok {
		if len(m.bounds) >= maxMixedEntries {
			return math.MaxUint64, false
		}
		byPath := make(map[string]uint64, len(paths))
		var top uint64
		for i, p := range paths {
			byPath[celvalue.PathKey(p.Root, p.Fields)] = sizes[i]
			top = max(top, sizes[i])
		}
		b = m.estimate(byPath, top)
		if m.bounds == nil {
			m.bounds = map[string]uint64{}
		}
		m.bounds[string(k)] = b
	}
	return b, b <= untrackedLimit
}
