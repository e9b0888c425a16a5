//go:build race

package celvalue_test

// raceEnabled reports that the race detector is on; the differential tests
// then sample their inputs, since the detector slows CEL evaluation tenfold.
const raceEnabled = true
