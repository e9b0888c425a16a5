// Audit annotations of one evaluation.

package policy

// auditResult is the outcome of one audit annotation: published when its
// value is a non-empty string, a denial when err is set.
type auditResult struct {
	key     string
	value   string
	publish bool
	err     string // non-empty: deny regardless of validationActions
}
