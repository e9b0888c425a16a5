//go:build vapkit_costcheck

package costcheck

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Violation is a measured cost above its estimated bound.
type Violation struct {
	Expression    string
	Class         int
	Actual, Bound uint64
}

// String describes the violation on one line.
func (v Violation) String() string {
	return fmt.Sprintf("expression %q at size class %d cost %d, above its bound %d", v.Expression, v.Class, v.Actual, v.Bound)
}

var (
	enabled    atomic.Int32
	checked    atomic.Int64
	mu         sync.Mutex
	violations []Violation
)

// Enable turns checking on until the returned function is called; calls
// nest.
func Enable() (disable func()) {
	enabled.Add(1)
	var once sync.Once
	return func() { once.Do(func() { enabled.Add(-1) }) }
}

// Enabled reports whether checking is on: between Enable and the call of
// the function it returned.
func Enabled() bool { return enabled.Load() > 0 }

// Check records a violation when actual exceeds bound.
func Check(expression string, class int, actual, bound uint64) {
	checked.Add(1)
	if actual <= bound {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	violations = append(violations, Violation{Expression: expression, Class: class, Actual: actual, Bound: bound})
}

// Checked returns how many measured costs were compared with their bound.
func Checked() int64 { return checked.Load() }

// Take returns the violations recorded so far and forgets them.
func Take() []Violation {
	mu.Lock()
	defer mu.Unlock()
	v := violations
	violations = nil
	return v
}
