// One allocation for the Decision of a request that traces one entry, with
// room for its expression entries.

package policy

// Blocks hold a Decision, its one-entry trace and up to N expression
// entries, so that a request with one trace entry allocates them at once.
// The sizes follow the allocator's size classes (Decision and PolicyTrace
// are 144 bytes, ExprTrace 72): 288, 448 (2), 576 (4) and 896 bytes (8).
type (
	block0 struct {
		d     Decision
		trace [1]PolicyTrace
	}
	block2 struct {
		block0
		exprs [2]ExprTrace
	}
	block4 struct {
		block0
		exprs [4]ExprTrace
	}
	block8 struct {
		block0
		exprs [8]ExprTrace
	}
)

// newDecisionBlock returns an allowing Decision, an empty trace with room
// for one entry and an empty slab with room for at least exprs expression
// entries (nil when it holds none; then the caller allocates them), all in
// one allocation.
func newDecisionBlock(exprs int) (*Decision, []PolicyTrace, []ExprTrace) {
	var b *block0
	var slab []ExprTrace
	switch {
	case exprs == 0:
		b = new(block0)
	case exprs <= 2:
		x := new(block2)
		b, slab = &x.block0, x.exprs[:0]
	case exprs <= 4:
		x := new(block4)
		b, slab = &x.block0, x.exprs[:0]
	case exprs <= 8:
		x := new(block8)
		b, slab = &x.block0, x.exprs[:0]
	default:
		b = new(block0)
	}
	b.d.Allowed = true
	return &b.d, b.trace[:0], slab
}
