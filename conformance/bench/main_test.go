package bench

import (
	"io"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// TestMain silences klog: the upstream plugin logs to stderr, which go test
// interleaves with the benchmark lines benchstat reads.
func TestMain(m *testing.M) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
