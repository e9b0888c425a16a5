//go:build race

package reviewcmd

// raceEnabled reports that the race detector is on: it slows CEL
// evaluation about fifty-fold, so the cases that spend whole cost budgets
// (millions of comprehension steps) run only without it.
const raceEnabled = true
