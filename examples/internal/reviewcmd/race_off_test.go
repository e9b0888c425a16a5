//go:build !race

package reviewcmd

const raceEnabled = false
