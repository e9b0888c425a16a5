package reviewcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy"

	"github.com/vapkit/vapkit/policy/casefile"
	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// Case outcomes.
const (
	statusPass  = "pass"
	statusFail  = "fail"
	statusError = "error"
	statusSkip  = "skip"
)

// caseResult is the outcome of one case.
type caseResult struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Expectation is the file holding the expectation.
	Expectation string `json:"expectation,omitempty"`
	Status      string `json:"status"`
	SkipReason  string `json:"skipReason,omitempty"`
	// Error is set when the case could not be run (status error).
	Error string `json:"error,omitempty"`
	// Refusals lists, as "file:line: problem", what the API server would
	// refuse to create among the case's objects; in test mode they make
	// the case an error unless -stored is given.
	Refusals []string  `json:"refusals,omitempty"`
	Failures []failure `json:"failures,omitempty"`
	// Response is the compared part of the response vapkit gave.
	Response *casefile.Comparable `json:"response,omitempty"`

	// inSuite: a test of a suite, whose File is "file:line".
	inSuite bool
}

// failure is one unmet expectation.
type failure struct {
	// Location is "file:line" of the expectation that failed.
	Location string `json:"location"`
	// Field is the expectation's field, e.g. deny.message or warnings[0].
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
	// Diff shows want and got as lines prefixed with "-" and "+".
	Diff string `json:"diff"`
}

// summary counts case outcomes.
type summary struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
}

func (s *summary) add(status string) {
	s.Total++
	switch status {
	case statusPass:
		s.Passed++
	case statusFail:
		s.Failed++
	case statusError:
		s.Errors++
	case statusSkip:
		s.Skipped++
	}
}

func (s *summary) merge(o summary) {
	s.Total += o.Total
	s.Passed += o.Passed
	s.Failed += o.Failed
	s.Errors += o.Errors
	s.Skipped += o.Skipped
}

// ok reports whether no case failed or errored.
func (s summary) ok() bool { return s.Failed == 0 && s.Errors == 0 }

// suite is the results of the cases under one path given on the command
// line.
type suite struct {
	Path    string       `json:"path"`
	Summary summary      `json:"summary"`
	Cases   []caseResult `json:"cases"`
}

// report is the result of a test run.
type report struct {
	KubernetesVersion string  `json:"kubernetesVersion"`
	OK                bool    `json:"ok"`
	Summary           summary `json:"summary"`
	Suites            []suite `json:"suites"`
	// Coverage is, per suite file, what its tests exercised of its
	// policies.
	Coverage []*coverage `json:"coverage,omitempty"`

	// verbose and quiet shape the text report (see config).
	verbose, quiet bool
}

// caseRef names one case file.
type caseRef struct {
	name, file string
}

// isCaseFile reports whether a file found in a directory is a case.
func isCaseFile(name string) bool {
	ext := filepath.Ext(name)
	if ext != ".yaml" && ext != ".yml" {
		return false
	}
	stem := strings.TrimSuffix(name, ext)
	return !strings.HasSuffix(stem, ".expect") && !strings.HasPrefix(name, ".")
}

// discovered is what a path given on the command line holds.
type discovered struct {
	cases  []caseRef
	suites []*loadedSuite
	// broken are suite files that could not be read, as error results.
	broken []caseResult
}

// discover lists the cases and suites of path (a file or a directory
// searched recursively), in lexical order, keeping the cases whose name and
// the suite tests whose name matches filter. In a directory, files that a
// suite uses (its cluster and object files) are not cases.
func discover(path string, filter *regexp.Regexp) (*discovered, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	out := &discovered{}
	keep := func(r caseRef) bool { return filter == nil || filter.MatchString(r.name) }
	addSuite := func(file string) {
		ls, err := loadSuite(file)
		if err != nil {
			out.broken = append(out.broken, caseResult{Name: file, File: file, Status: statusError, Error: err.Error()})
			return
		}
		if filter != nil && !slices.ContainsFunc(ls.suite.Tests, func(t SuiteTest) bool { return filter.MatchString(t.Name) }) {
			return
		}
		out.suites = append(out.suites, ls)
	}
	if !info.IsDir() {
		if data, err := os.ReadFile(path); err == nil && isSuite(data) {
			addSuite(path)
			return out, nil
		}
		r := caseRef{name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), file: path}
		if keep(r) {
			out.cases = []caseRef{r}
		}
		return out, nil
	}
	var candidates []caseRef
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isCaseFile(d.Name()) {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && isSuite(data) {
			addSuite(p)
			return nil
		}
		rel, err := filepath.Rel(path, p)
		if err != nil {
			return err
		}
		candidates = append(candidates, caseRef{name: filepath.ToSlash(strings.TrimSuffix(rel, filepath.Ext(rel))), file: p})
		return nil
	})
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, ls := range out.suites {
		for _, f := range ls.files() {
			used[filepath.Clean(f)] = true
		}
	}
	for _, c := range candidates {
		if !used[filepath.Clean(c.file)] && keep(c) {
			out.cases = append(out.cases, c)
		}
	}
	return out, nil
}

// runner runs cases.
type runner struct {
	opts     casefile.Options
	parallel int
	// stored evaluates objects as already stored: decoding is not strict
	// and refusals are reported without making the case an error.
	stored bool
}

// runSuite runs the cases of one path concurrently and returns their
// results in discovery order.
func (r *runner) runSuite(ctx context.Context, path string, refs []caseRef) suite {
	s := suite{Path: path, Cases: make([]caseResult, len(refs))}
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(r.parallel, len(refs))) {
		wg.Go(func() {
			for i := range work {
				s.Cases[i] = r.runCase(ctx, refs[i])
			}
		})
	}
	for i := range refs {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, c := range s.Cases {
		s.Summary.add(c.Status)
	}
	return s
}

// loadedCase is a parsed case file with the documents it was read from.
type loadedCase struct {
	c    *casefile.Case
	data []byte
	docs []manifest.Document
}

// loadCase reads a case file. Expectation documents are kept out of the
// case's parameter objects. With strict, objects of built-in kinds
// (including the request's) are decoded as the API server decodes them
// under strict field validation: unknown fields and wrong types are errors.
func loadCase(file string, strict bool) (*loadedCase, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	docs, err := manifest.DecodeWith(data, file, manifest.Options{Strict: strict})
	if err != nil {
		return nil, err
	}
	c, err := casefile.Parse(data, file)
	if err != nil {
		return nil, err
	}
	l := &loadedCase{c: c, data: data, docs: docs}
	isExpectation := func(o k8sruntime.Object) bool {
		return o.GetObjectKind().GroupVersionKind() == expectationKind
	}
	c.Params = slices.DeleteFunc(c.Params, isExpectation)
	return l, nil
}

// refusals returns what the API server of env's version would refuse to
// create among the case's objects ([policy.Refusals], custom resources
// that their CRD's schema refuses and built-in objects whose metadata
// kube-apiserver refuses, the request's object included), each as
// "file:line: problem" with the line of the field concerned.
func (l *loadedCase) refusals(file string, env *celenv.Env) []string {
	var out []string
	if rs := policy.Refusals(env, &manifest.Set{Policies: l.c.Policies, Bindings: l.c.Bindings}); len(rs) > 0 {
		where := map[k8sruntime.Object]located{}
		indexDocs(file, l.docs, &manifest.Set{Policies: l.c.Policies, Bindings: l.c.Bindings}, where)
		out = locateRefusals(rs, where)
	}
	v, err := typecheck.NewCustomResourceValidator(l.c.CRDs...)
	if err != nil {
		return append(out, fmt.Sprintf("%s: %v", file, err))
	}
	return append(out, customResourceRefusals(v, file, l.docs, len(l.c.MutatingPolicies) == 0)...)
}

// caseExpectation is the expectation of a case, from one of its sources.
type caseExpectation struct {
	file     string
	yaml     *expectation       // an Expectation document
	expected *casefile.Expected // a NAME.expected.json file
}

// stem returns file without its extension.
func stem(file string) string { return strings.TrimSuffix(file, filepath.Ext(file)) }

// findExpectation returns the expectation of the case l read from file:
// inline, NAME.expect.yaml (or .yml), or NAME.expected.json. More or fewer
// than one source is an error.
func findExpectation(file string, l *loadedCase) (*caseExpectation, error) {
	var found []*caseExpectation
	if l.docs != nil {
		e, err := inlineExpectation(file, l.data, l.docs)
		if err != nil {
			return nil, err
		}
		if e != nil {
			found = append(found, &caseExpectation{file: file, yaml: e})
		}
	}
	for _, ext := range []string{".expect.yaml", ".expect.yml", ".expected.json"} {
		name := stem(file) + ext
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ce := &caseExpectation{file: name}
		if ext == ".expected.json" {
			ce.expected, err = parseExpectedFile(name, data)
		} else {
			ce.yaml, err = parseExpectationFile(name, data)
		}
		if err != nil {
			return nil, err
		}
		found = append(found, ce)
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%s: no expectation: add an Expectation document to the file, or a %s.expect.yaml or %s.expected.json next to it", file, filepath.Base(stem(file)), filepath.Base(stem(file)))
	case 1:
		return found[0], nil
	}
	var names []string
	for _, f := range found {
		names = append(names, f.file)
	}
	return nil, fmt.Errorf("%s: more than one expectation (%s); keep one", file, strings.Join(names, ", "))
}

// parseExpectedFile reads a NAME.expected.json file, naming the file and
// the line in errors.
func parseExpectedFile(name string, data []byte) (*casefile.Expected, error) {
	e, err := casefile.ParseExpected(data)
	if err == nil {
		return e, nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return nil, fmt.Errorf("%s:%d: %w", name, lineAt(data, syn.Offset), err)
	case errors.As(err, &typ):
		return nil, fmt.Errorf("%s:%d: %w", name, lineAt(data, typ.Offset), err)
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return 1 + strings.Count(string(data[:off]), "\n")
}

// runCase runs one case and checks it against its expectation.
func (r *runner) runCase(ctx context.Context, ref caseRef) caseResult {
	res := caseResult{Name: ref.name, File: ref.file}
	fail := func(err error) caseResult {
		res.Status, res.Error = statusError, err.Error()
		return res
	}
	l, err := loadCase(ref.file, !r.stored)
	if err != nil {
		return fail(err)
	}
	res.Refusals = l.refusals(ref.file, r.opts.Env)
	if len(res.Refusals) > 0 && !r.stored {
		return fail(fmt.Errorf("the API server would refuse to create this case's objects (-stored evaluates them anyway):\n%s", strings.Join(res.Refusals, "\n")))
	}
	exp, err := findExpectation(ref.file, l)
	if err != nil {
		return fail(err)
	}
	res.Expectation = exp.file
	if exp.yaml != nil && exp.yaml.skip != "" {
		res.Status, res.SkipReason = statusSkip, exp.yaml.skip
		return res
	}
	ev, req, err := l.c.CompileWith(r.opts)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", ref.file, err))
	}
	d, err := ev.Evaluate(ctx, req)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", ref.file, err))
	}
	ar := l.c.AdmissionReview.Request
	got := casefile.Project(d.AdmissionResponse(ar.UID))
	res.Response = &got
	if exp.yaml != nil {
		raw := ar.Object.Raw
		if len(raw) == 0 || string(raw) == "null" {
			if raw, err = objectJSON(req.Object); err != nil {
				return fail(fmt.Errorf("%s: %w", ref.file, err))
			}
		}
		m, err := mutatedOf(raw, d)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", ref.file, err))
		}
		for _, mm := range exp.yaml.check(got, m) {
			res.Failures = append(res.Failures, mm.failure(exp.file))
		}
	} else if f := checkExpected(exp.file, exp.expected, got); f != nil {
		res.Failures = append(res.Failures, *f)
	}
	res.Status = statusPass
	if len(res.Failures) > 0 {
		res.Status = statusFail
	}
	return res
}

// checkExpected compares got with an expected file: the response or any
// oracle alternative is accepted. On a mismatch the diff is against the
// response.
func checkExpected(file string, e *casefile.Expected, got casefile.Comparable) *failure {
	outcomes := e.Outcomes()
	gotText := renderComparable(got)
	for _, o := range outcomes {
		if renderComparable(o) == gotText {
			return nil
		}
	}
	want := renderComparable(outcomes[0])
	field := "response"
	if n := len(e.Alternatives); n > 0 {
		field = fmt.Sprintf("response (none of the %d acceptable outcomes; diff against the first)", n)
	}
	return &failure{Location: file, Field: field, Want: want, Got: gotText, Diff: lineDiff(want, gotText)}
}

// renderComparable renders c as indented JSON without HTML escaping.
func renderComparable(c casefile.Comparable) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Sprintf("%+v", c)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// defaultParallel is how many cases run at once.
func defaultParallel() int { return runtime.GOMAXPROCS(0) }
