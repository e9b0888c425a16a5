//go:build !race

package celenv_test

const raceEnabled = false
