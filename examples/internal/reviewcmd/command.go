// Package reviewcmd is the policy test runner behind examples/review and
// examples/vapkit (vapkit test and vapkit eval): it evaluates case files and
// suites and checks them against their expectations.
package reviewcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy/casefile"
)

const usageText = `usage: review [flags] CASE.yaml      print the AdmissionReview response of one case
       review [flags] PATH...         test suites and cases (directories, suite files, or case files with -test)

flags:
  -format text|json|junit      test report format (default text)
  -kubernetes-version 1.NN     API server (binary) version to evaluate as, 1.30 to 1.37 (default 1.37);
                               new expressions are checked as its compatibility version, one minor lower
  -run REGEXP                  test only the cases whose name matches REGEXP
  -v                           show the decision of every case in text reports
  -stored                      evaluate objects the API server would refuse to create (as if already stored)
  -test                        test case files given by name instead of printing their response
`

// usageError is a command-line mistake.
type usageError struct{ msg string }

func (e *usageError) Error() string {
	return e.msg + " (usage: review [flags] CASE.yaml, or review [flags] PATH...; -h lists the flags)"
}

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// failedError is returned when a test run has failing cases.
type failedError struct{ s summary }

func (e *failedError) Error() string {
	return fmt.Sprintf("%d of %d cases failed", e.s.Failed+e.s.Errors, e.s.Total)
}

// Main runs the review command with args (without the program name),
// writing results to stdout and problems to stderr, and returns the exit
// status.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := runWith(ctx, args, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "review: "+strings.ReplaceAll(err.Error(), "\n", " "))
	}
	return exitCode(err)
}

// exitCode is the exit status for the result of run: 0 on success, 2 for
// command-line mistakes and 1 for everything else (failed cases, bad
// input).
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// config is the parsed command line.
type config struct {
	paths    []string
	format   string
	version  celenv.Version
	filter   *regexp.Regexp
	testMode bool
	stored   bool
	// verbose (-v) adds, in text, each test's decision; quiet (vapkit
	// test without -v) lists only the tests that did not pass.
	verbose, quiet bool
}

// parseArgs reads flags and paths; flags may follow paths.
func parseArgs(args []string) (*config, bool, error) {
	fs := flag.NewFlagSet("review", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", formatText, "")
	version := fs.String("kubernetes-version", "", "")
	runExpr := fs.String("run", "", "")
	fs.Bool("test", false, "")
	stored := fs.Bool("stored", false, "")
	verbose := fs.Bool("v", false, "")
	cfg := &config{}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, true, nil
			}
			return nil, false, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			cfg.paths = append(cfg.paths, rest...)
			break
		}
		cfg.paths, args = append(cfg.paths, rest[0]), rest[1:]
	}
	if len(cfg.paths) == 0 {
		return nil, false, usagef("no case file or directory given")
	}
	switch *format {
	case formatText, formatJSON, formatJUnit:
		cfg.format = *format
	default:
		return nil, false, usagef("unknown -format %q: want text, json or junit", *format)
	}
	cfg.version = celenv.MaxVersion
	if *version != "" {
		v, err := celenv.ParseVersion(*version)
		if err != nil {
			return nil, false, usagef("-kubernetes-version: %v", err)
		}
		cfg.version = v
	}
	if *runExpr != "" {
		re, err := regexp.Compile(*runExpr)
		if err != nil {
			return nil, false, usagef("-run: %v", err)
		}
		cfg.filter = re
	}
	cfg.stored = *stored
	cfg.verbose = *verbose
	// Any test-only flag, a directory or several paths select test mode.
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "kubernetes-version" && f.Name != "stored" {
			cfg.testMode = true
		}
	})
	if len(cfg.paths) > 1 {
		cfg.testMode = true
	}
	return cfg, false, nil
}

// run executes the command with args, writing results to out. A test run
// with failing cases writes its report and returns a *failedError.
func run(ctx context.Context, args []string, out io.Writer) error {
	return runWith(ctx, args, out, io.Discard)
}

// runWith is run with a writer for diagnostics that are not the result,
// such as what the API server would have refused in a printed case.
func runWith(ctx context.Context, args []string, out, stderr io.Writer) error {
	cfg, help, err := parseArgs(args)
	if err != nil {
		return err
	}
	if help {
		_, err := io.WriteString(out, usageText)
		return err
	}
	return execute(ctx, cfg, out, stderr)
}

// execute runs a parsed command line.
func execute(ctx context.Context, cfg *config, out, stderr io.Writer) error {
	env, err := celenv.New(celenv.Options{Version: cfg.version})
	if err != nil {
		return err
	}
	opts := casefile.Options{Env: env}
	if !cfg.testMode {
		info, err := os.Stat(cfg.paths[0])
		if err != nil {
			return err
		}
		if data, err := os.ReadFile(cfg.paths[0]); !info.IsDir() && (err != nil || !isSuite(data)) {
			return reviewOne(ctx, cfg.paths[0], opts, out, stderr)
		}
	}
	r := &runner{opts: opts, parallel: defaultParallel(), stored: cfg.stored}
	rep := &report{KubernetesVersion: cfg.version.String(), verbose: cfg.verbose, quiet: cfg.quiet && !cfg.verbose}
	for _, p := range cfg.paths {
		found, err := discover(p, cfg.filter)
		if err != nil {
			return err
		}
		if len(found.cases) == 0 && len(found.suites) == 0 && len(found.broken) == 0 {
			if cfg.filter != nil {
				return fmt.Errorf("%s: no case or test matches -run %q", p, cfg.filter)
			}
			return fmt.Errorf("%s: no case or suite files (*.yaml) found", p)
		}
		if len(found.cases) > 0 {
			s := r.runSuite(ctx, p, found.cases)
			rep.Summary.merge(s.Summary)
			rep.Suites = append(rep.Suites, s)
		}
		for _, b := range found.broken {
			s := suite{Path: b.File, Cases: []caseResult{b}}
			s.Summary.add(statusError)
			rep.Summary.merge(s.Summary)
			rep.Suites = append(rep.Suites, s)
		}
		for _, ls := range found.suites {
			s, cov := r.runSuiteFile(ctx, ls, cfg.filter)
			rep.Summary.merge(s.Summary)
			rep.Suites = append(rep.Suites, s)
			if cov != nil {
				rep.Coverage = append(rep.Coverage, cov)
			}
		}
	}
	rep.OK = rep.Summary.ok()
	if err := writeReport(out, rep, cfg.format); err != nil {
		return err
	}
	if !rep.OK {
		return &failedError{s: rep.Summary}
	}
	return nil
}

// reviewOne prints the AdmissionReview response of one case file: what the
// API server answers with the case's objects stored. What it would have
// refused to create, or to decode under strict field validation, goes to
// stderr.
func reviewOne(ctx context.Context, file string, opts casefile.Options, out, stderr io.Writer) error {
	l, err := loadCase(file, false)
	if err != nil {
		return err
	}
	if _, err := loadCase(file, true); err != nil {
		fmt.Fprintf(stderr, "review: the API server would refuse to decode this object under strict field validation: %v\n", err)
	}
	for _, r := range l.refusals(file, opts.Env) {
		fmt.Fprintf(stderr, "review: the API server would refuse to create: %s\n", r)
	}
	resp, err := l.c.ReviewWith(ctx, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{Kind: "AdmissionReview", APIVersion: "admission.k8s.io/v1"},
		Response: resp,
	}
	b, err := json.MarshalIndent(review, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}
