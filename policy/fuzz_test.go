package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/casefile"
	"github.com/vapkit/vapkit/policy/manifest"
)

// The fuzz targets are seeded from testdata/cases, as OPA seeds its fuzzer
// from its test cases. Every target checks the properties of checkDecision:
// no panic, the same input gives the same Decision twice, an erroring
// failurePolicy Fail policy bound with Deny never allows, and every policy is
// in the trace. Each fuzzes a small piece of a case (one document, one
// policy, one expression, one request) and compiles with one shared CEL
// environment, so that an iteration takes milliseconds: building an
// environment costs more than compiling and evaluating a case.

// testCase is one parsed testdata case with its compiled evaluator.
type testCase struct {
	name string
	file string
	c    *casefile.Case
	ev   *policy.Evaluator
	req  *policy.Request
}

// fuzzEnv returns the CEL environment (Kubernetes 1.37, as a nil
// policy.Options.Env) that every fuzz iteration shares; an Env is
// immutable and safe for concurrent use.
var fuzzEnv = sync.OnceValues(func() (*celenv.Env, error) { return celenv.New(celenv.Options{}) })

// fuzzOptions are the options the fuzz targets compile cases with.
func fuzzOptions(tb testing.TB) casefile.Options {
	tb.Helper()
	env, err := fuzzEnv()
	if err != nil {
		tb.Fatal(err)
	}
	return casefile.Options{TraceUnmatched: true, Env: env}
}

// loadCases parses and compiles every testdata case, once per test binary:
// the evaluators are immutable, and the targets copy what they change.
func loadCases(tb testing.TB) []testCase {
	tb.Helper()
	cases, err := parsedCases()
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}

var parsedCases = sync.OnceValues(func() ([]testCase, error) {
	env, err := fuzzEnv()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New("no cases found")
	}
	var out []testCase
	for _, f := range files {
		c, err := casefile.ParseFile(f)
		if err != nil {
			return nil, fmt.Errorf("ParseFile(%s) error = %w", f, err)
		}
		ev, req, err := c.CompileWith(casefile.Options{TraceUnmatched: true, Env: env})
		if err != nil {
			return nil, fmt.Errorf("%s: Compile() error = %w", f, err)
		}
		out = append(out, testCase{name: strings.TrimSuffix(filepath.Base(f), ".yaml"), file: f, c: c, ev: ev, req: req})
	}
	return out, nil
})

// fuzzCases are the cases the fuzz targets start from: all but the cost
// cases, whose evaluations spend the whole budget (seconds each); the cost
// limits have their own tests.
func fuzzCases(tb testing.TB) []testCase {
	var out []testCase
	for _, tc := range loadCases(tb) {
		if !strings.HasPrefix(tc.name, "cost-") {
			out = append(out, tc)
		}
	}
	return out
}

// decisionOpts compare whole Decisions: errors and paths by their text.
var decisionOpts = cmp.Options{
	cmp.Comparer(func(a, b error) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return a.Error() == b.Error()
	}),
	cmp.Comparer(func(a, b *field.Path) bool { return a.String() == b.String() }),
}

// failurePolicies maps policy names to their effective failurePolicy.
func failurePolicies(ps []*admissionregistrationv1.ValidatingAdmissionPolicy) map[string]admissionregistrationv1.FailurePolicyType {
	out := map[string]admissionregistrationv1.FailurePolicyType{}
	for _, p := range ps {
		if p == nil {
			continue
		}
		fp := admissionregistrationv1.Fail
		if p.Spec.FailurePolicy != nil {
			fp = *p.Spec.FailurePolicy
		}
		out[p.Name] = fp
	}
	return out
}

// checkDecision evaluates req twice and checks the reliability properties:
//
//   - Evaluate returns a decision or an error, never both, and the same
//     input gives the same result twice (the whole Decision, trace included);
//   - Allowed is true exactly when Status is nil;
//   - fail-closed: when a trace entry of a policy with failurePolicy Fail
//     is Errored and its binding has the Deny action (or the error is at
//     policy level, Binding empty), Allowed is false;
//   - nothing is dropped: every policy appears in the trace, unless the
//     request was aborted by a failed namespace lookup.
func checkDecision(t *testing.T, ev *policy.Evaluator, ps []*admissionregistrationv1.ValidatingAdmissionPolicy, req *policy.Request) *policy.Decision {
	t.Helper()
	ctx := context.Background()
	d, err := ev.Evaluate(ctx, req)
	d2, err2 := ev.Evaluate(ctx, req)
	if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
		t.Fatalf("Evaluate() errors differ between runs: %v / %v", err, err2)
	}
	if err != nil {
		if d != nil {
			t.Fatalf("Evaluate() = %+v, %v: decision with error", d, err)
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Evaluate() error = %v without cancellation", err)
		}
		return nil
	}
	if diff := cmp.Diff(d, d2, decisionOpts); diff != "" {
		t.Fatalf("Evaluate() not deterministic (-first +second):\n%s", diff)
	}
	if d.Allowed != (d.Status == nil) {
		t.Fatalf("Evaluate() Allowed = %v with Status %+v", d.Allowed, d.Status)
	}
	if d.Status != nil && (d.Status.Code == 0 || d.Status.Message == "") {
		t.Fatalf("Evaluate() Status = %+v, want a code and a message", d.Status)
	}
	fps := failurePolicies(ps)
	traced := map[string]bool{}
	aborted := false
	for _, tr := range d.Trace {
		traced[tr.Policy] = true
		if tr.Err != nil && strings.HasPrefix(tr.Err.Error(), "namespace lookup failed") {
			aborted = true
		}
		if tr.Outcome != policy.Errored || fps[tr.Policy] != admissionregistrationv1.Fail {
			continue
		}
		if (tr.Binding == "" || slices.Contains(tr.Actions, admissionregistrationv1.Deny)) && d.Allowed {
			t.Fatalf("Evaluate() allowed the request although %v errored under failurePolicy Fail", tr)
		}
	}
	if !aborted {
		for name := range fps {
			if !traced[name] {
				t.Fatalf("Evaluate() trace has no entry for policy %q: %v", name, d.Trace)
			}
		}
	}
	return d
}

// expressionSlots returns pointers to every expression of ps, in a fixed
// order: variables, match conditions, validations, message expressions,
// audit annotations.
func expressionSlots(ps []*admissionregistrationv1.ValidatingAdmissionPolicy) []*string {
	var out []*string
	for _, p := range ps {
		s := &p.Spec
		for i := range s.Variables {
			out = append(out, &s.Variables[i].Expression)
		}
		for i := range s.MatchConditions {
			out = append(out, &s.MatchConditions[i].Expression)
		}
		for i := range s.Validations {
			out = append(out, &s.Validations[i].Expression)
		}
		for i := range s.Validations {
			out = append(out, &s.Validations[i].MessageExpression)
		}
		for i := range s.AuditAnnotations {
			out = append(out, &s.AuditAnnotations[i].ValueExpression)
		}
	}
	return out
}

func deepCopyPolicies(ps []*admissionregistrationv1.ValidatingAdmissionPolicy) []*admissionregistrationv1.ValidatingAdmissionPolicy {
	out := make([]*admissionregistrationv1.ValidatingAdmissionPolicy, len(ps))
	for i, p := range ps {
		out[i] = p.DeepCopy()
	}
	return out
}

// adversarialExprs seed the expression fuzzers with expensive and odd
// expressions.
var adversarialExprs = []string{
	"[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, a+b+c+d > 0))))",
	"[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, 'xxxxxxxxxxxxxxxx' + string(a) + string(b))).size() > 0",
	"object.metadata.name.matches('^(a+)+$')",
	"variables.missing",
	"1/0 == 1",
	"authorizer.group('').resource('pods').check('get').allowed()",
	"params.x == 1",
	"object.spec.__namespace__ == 1",
	"''",
	"null",
	"(((((((((((((((((((((1)))))))))))))))))))) == 1",
	"\xff",
}

// FuzzLoad loads random manifests and, when they hold policies and one
// AdmissionReview, compiles and evaluates them. A manifest is a testdata
// case with one line replaced by the random text, which may hold several
// lines or documents, or none: a small input, which the fuzzer mutates and
// minimizes quickly, while Load still reads a whole case.
func FuzzLoad(f *testing.F) {
	cases := fuzzCases(f)
	lines := make([][]string, len(cases))
	for i, tc := range cases {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			f.Fatal(err)
		}
		lines[i] = strings.Split(string(data), "\n")
		// Seed each case with a different line of content, so that the
		// seeds edit policies, bindings, params and reviews.
		var content []int
		for n, l := range lines[i] {
			if l != "" && l != "---" && !strings.HasPrefix(l, "#") {
				content = append(content, n)
			}
		}
		n := content[i%len(content)]
		f.Add(uint8(i), uint8(n), []byte(lines[i][n]))
	}
	f.Add(uint8(0), uint8(0), []byte("---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nspec: {validations: [{expression: 1}]}\n---"))
	f.Add(uint8(1), uint8(0), []byte("---\n{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\", \"kind\": \"Namespace\", \"metadata\": {\"name\": \"\\xff\"}}]}\n---"))
	opts := fuzzOptions(f)
	f.Fuzz(func(t *testing.T, idx, line uint8, text []byte) {
		edited := slices.Clone(lines[int(idx)%len(lines)])
		edited[int(line)%len(edited)] = string(text)
		data := []byte(strings.Join(edited, "\n"))
		m, err := manifest.Load(data, "fuzz.yaml")
		m2, err2 := manifest.Load(data, "fuzz.yaml")
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("Load() errors differ between runs: %v / %v", err, err2)
		}
		if err != nil {
			if m != nil {
				t.Fatalf("Load() = %+v, %v: manifests with error", m, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("Load() error = %q, want it to start with the file name", err)
			}
			return
		}
		if !cmp.Equal(m, m2) {
			t.Fatalf("Load() not deterministic")
		}
		c, err := casefile.Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		ev, req, err := c.CompileWith(opts)
		if err != nil {
			return
		}
		checkDecision(t, ev, c.Policies, req)
	})
}

// FuzzCompile replaces one policy of a testdata case with a random policy
// written as JSON, compiles and evaluates the case's request.
func FuzzCompile(f *testing.F) {
	cases := fuzzCases(f)
	for i, tc := range cases {
		for _, p := range tc.c.Policies {
			data, err := json.Marshal(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), data)
			break
		}
	}
	f.Add(uint8(0), []byte(`{"metadata":{"name":"p"},"spec":{"paramKind":{"apiVersion":"a/b/c","kind":"X"},"validations":[{"expression":"true"}]}}`))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"p"},"spec":{"failurePolicy":"Bogus","matchConstraints":{"resourceRules":[{"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],"resources":["*"]}]},"validations":[{"expression":"1"}]}}`))
	opts := fuzzOptions(f)
	f.Fuzz(func(t *testing.T, idx uint8, data []byte) {
		tc := cases[int(idx)%len(cases)]
		var p admissionregistrationv1.ValidatingAdmissionPolicy
		if err := json.Unmarshal(data, &p); err != nil {
			return
		}
		c := *tc.c
		c.Policies = deepCopyPolicies(c.Policies)
		if len(c.Policies) > 0 {
			c.Policies[0] = &p
		} else {
			c.Policies = append(c.Policies, &p)
		}
		ev, req, err := c.CompileWith(opts)
		if err != nil {
			if !strings.Contains(err.Error(), "metadata.name: Duplicate value") {
				t.Fatalf("Compile() error = %v, want only duplicate names to fail", err)
			}
			return
		}
		for _, iss := range ev.Issues() {
			if !strings.HasPrefix(iss.Field, "validatingAdmissionPolicy") && iss.Field != "options.namespaces" {
				t.Fatalf("Issues() has %v, want a path under validatingAdmissionPolicy[...]", iss)
			}
		}
		checkDecision(t, ev, c.Policies, req)
	})
}

// FuzzEvaluatePolicy replaces one expression of a testdata case's policies
// with a random one, sets a failurePolicy, and evaluates the case's request.
func FuzzEvaluatePolicy(f *testing.F) {
	cases := fuzzCases(f)
	for i, tc := range cases {
		if slots := expressionSlots(tc.c.Policies); len(slots) > 0 {
			f.Add(uint8(i), uint8(0), uint8(0), *slots[0])
		}
	}
	for i, e := range adversarialExprs {
		f.Add(uint8(i*7), uint8(i), uint8(i), e)
	}
	fps := []*admissionregistrationv1.FailurePolicyType{
		nil, ptr(admissionregistrationv1.Fail), ptr(admissionregistrationv1.Ignore),
	}
	opts := fuzzOptions(f)
	f.Fuzz(func(t *testing.T, idx, slot, fp uint8, expr string) {
		tc := cases[int(idx)%len(cases)]
		c := *tc.c
		c.Policies = deepCopyPolicies(c.Policies)
		slots := expressionSlots(c.Policies)
		if len(slots) == 0 {
			return
		}
		*slots[int(slot)%len(slots)] = expr
		for _, p := range c.Policies {
			p.Spec.FailurePolicy = fps[int(fp)%len(fps)]
		}
		ev, req, err := c.CompileWith(opts)
		if err != nil {
			t.Fatalf("Compile() error = %v", err)
		}
		d := checkDecision(t, ev, c.Policies, req)
		measured := opts
		measured.MeasureCost = true
		checkMeasured(t, &c, d, measured)
	})
}

// checkMeasured evaluates c again with opts, which measure every cost, and
// checks that
// the decision is the one d (evaluated untracked where the estimates
// allowed) reached, and that no measured cost exceeded its estimate.
func checkMeasured(t *testing.T, c *casefile.Case, d *policy.Decision, opts casefile.Options) {
	t.Helper()
	ev, req, err := c.CompileWith(opts)
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	var measured *policy.Decision
	checkBounds(t, func() { measured, err = ev.Evaluate(context.Background(), req) })
	if (d == nil) != (err != nil) {
		t.Fatalf("Evaluate() with MeasureCost error = %v, without: decision %v", err, d != nil)
	}
	if d == nil {
		return
	}
	ignoreCosts := cmp.Options{
		cmpopts.IgnoreFields(policy.PolicyTrace{}, "Cost", "CostEstimated"),
		cmpopts.IgnoreFields(policy.ExprTrace{}, "Cost", "CostEstimated"),
		// Messages of passing validations may be skipped when untracked;
		// the messages that count are in the failed validations' entries.
		cmpopts.IgnoreSliceElements(func(e policy.ExprTrace) bool {
			return strings.HasSuffix(e.Path.String(), "messageExpression")
		}),
	}
	if diff := cmp.Diff(d, measured, decisionOpts, ignoreCosts); diff != "" {
		t.Fatalf("decision differs when every cost is measured (-untracked +measured):\n%s", diff)
	}
}

// FuzzEvaluateRequest evaluates random AdmissionRequest JSON against the
// policies of a testdata case.
func FuzzEvaluateRequest(f *testing.F) {
	cases := fuzzCases(f)
	for i, tc := range cases {
		data, err := json.Marshal(tc.c.AdmissionReview.Request)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
	}
	f.Add(uint8(3), []byte(`{"operation":"CREATE","kind":{"group":"apps","version":"v1","kind":"Deployment"},"resource":{"group":"apps","version":"v1","resource":"deployments"},"namespace":"default","object":{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":"three"}}}`))
	f.Add(uint8(5), []byte(`{"operation":"UPDATE","kind":{"version":"v1","kind":"Pod"},"resource":{"version":"v1","resource":"pods"},"namespace":"nope","object":{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"a":"\u00ff"}}}}`))
	f.Fuzz(func(t *testing.T, idx uint8, data []byte) {
		tc := cases[int(idx)%len(cases)]
		var ar admissionv1.AdmissionRequest
		if err := json.Unmarshal(data, &ar); err != nil {
			return
		}
		req, err := policy.RequestFromAdmission(&ar)
		if err != nil {
			return
		}
		checkDecision(t, tc.ev, tc.c.Policies, req)
	})
}

func ptr[T any](v T) *T { return &v }
