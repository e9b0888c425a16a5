//go:build !race

package celvalue_test

const raceEnabled = false
