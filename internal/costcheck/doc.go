// Package costcheck lets tests verify the cost bounds that decide when
// vapkit evaluates an expression without cost tracking: while enabled,
// every batch is tracked, and each measured cost above the estimated bound
// for the request's size class is recorded as a violation.
//
// It exists only in test builds with the vapkit_costcheck build tag:
//
//	go test -tags vapkit_costcheck -run CostBounds ./policy
//
// Without the tag, [Enabled] is a function returning the constant false,
// which the compiler inlines, so the evaluation path reads no global state
// and the checks compile away; Enable, Take and Checked do not exist, and
// the tests that use them carry the tag too. CI (.ci/run) runs them.
package costcheck
