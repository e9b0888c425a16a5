//go:build !vapkit_costcheck

package costcheck

// Enabled reports whether checking is on; without the vapkit_costcheck
// build tag it never is.
func Enabled() bool { return false }

// Check does nothing without the vapkit_costcheck build tag.
func Check(expression string, class int, actual, bound uint64) {}
