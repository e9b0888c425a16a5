package upstream

import (
	"flag"
	"io"

	"k8s.io/klog/v2"
)

// SilenceKlog discards what the plugin, its informers and client-go log
// through klog (none of it is part of a response), so that test and harness
// output stays readable. Call it once, before the first Cluster starts.
func SilenceKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
