//go:build vapkit_harness

// Command harness runs the ValidatingAdmissionPolicy admission plugin of an
// older k8s.io/apiserver on conformance cases and prints, for each case,
// every response upstream can give (one per relevant ordering of policies,
// bindings and params, and per order of compiling policies that share
// variable names), as JSON lines on standard output:
//
//	{"name":"<file name without .yaml>","outcomes":[<AdmissionResponse>...]}
//	{"name":"...","error":"<why the case could not be run>"}
//
// It is not built here: package versions (versions.Materialize) copies it,
// with the files of the conformance module's package upstream that the
// version builds, into a module of its own with the go.mod and go.sum of
// one version from ./mod (an old plugin needs its own cel-go, vapkit needs
// v0.29) and runs it with the build tags vapkit_harness and
// vapkit_k8s_1_NN, which select the few files that follow that version's
// API. By hand, for 1.33:
//
//	go run ./versions/cmd/materialize -version 1.33 /tmp/h133
//	cd /tmp/h133 && GOWORK=off go run -tags vapkit_harness,vapkit_k8s_1_33 . DIR...
//
// Each DIR holds case files (*.yaml, the shared case format of
// policy/testdata/cases).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vapkit/vapkit/conformance/upstream"
)

// result is one output line.
type result struct {
	Name     string                           `json:"name"`
	Outcomes []*admissionv1.AdmissionResponse `json:"outcomes,omitempty"`
	Error    string                           `json:"error,omitempty"`
}

func main() {
	maxOrders := flag.Int("orderings", 24, "most orderings tried per case")
	parallel := flag.Int("parallel", 8*runtime.GOMAXPROCS(0), "cases run at once (each mostly waits for its informers)")
	flag.Parse()
	upstream.SilenceKlog()
	if err := run(flag.Args(), *maxOrders, *parallel, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

func run(dirs []string, maxOrders, parallel int, out io.Writer) error {
	if len(dirs) == 0 {
		return fmt.Errorf("usage: go run . DIR...")
	}
	var files []string
	for _, d := range dirs {
		fs, err := filepath.Glob(filepath.Join(d, "*.yaml"))
		if err != nil {
			return err
		}
		files = append(files, fs...)
	}
	sort.Strings(files)
	results := make([]result, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = runCase(files[i], maxOrders)
			}
		}()
	}
	for i := range files {
		work <- i
	}
	close(work)
	wg.Wait()
	enc := json.NewEncoder(out)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func runCase(file string, maxOrders int) result {
	name := strings.TrimSuffix(filepath.Base(file), ".yaml")
	r := result{Name: name}
	data, err := os.ReadFile(file)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	c, err := upstream.ParseCase(data, name)
	if err != nil {
		r.Error = "ParseCase: " + err.Error()
		return r
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	outs, err := upstream.Outcomes(ctx, c, maxOrders)
	if err != nil {
		r.Error = "Outcomes: " + err.Error()
		return r
	}
	r.Outcomes = outs
	return r
}
