//go:build !unix

package reviewcmd

import "time"

// cpuTime is not measured on this system; the metric reads 0.
func cpuTime() time.Duration { return 0 }
