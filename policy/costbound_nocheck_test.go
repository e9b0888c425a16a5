//go:build !vapkit_costcheck

package policy_test

import "testing"

// checkBounds runs evaluate; only with the vapkit_costcheck build tag does
// it also check measured costs against their bounds (see
// costbound_check_test.go).
func checkBounds(t *testing.T, evaluate func()) {
	t.Helper()
	evaluate()
}
