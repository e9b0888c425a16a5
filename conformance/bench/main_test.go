package bench

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// TestMain silences klog: the upstream plugin logs to stderr, which go test
// interleaves with the benchmark lines benchstat reads. With BENCH_SHAPES
// set it prints each workload's shape, as run.sh does first, and exits.
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_SHAPES") != "" {
		for _, w := range Workloads() {
			fmt.Printf("# %s: %s\n", w.Name, w.Shape)
		}
		for _, w := range MutatingWorkloads() {
			fmt.Printf("# %s: %s\n", w.Name, w.Shape)
		}
		os.Exit(0)
	}
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
