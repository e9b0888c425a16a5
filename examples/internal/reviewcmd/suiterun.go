package reviewcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/casefile"
	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// authorizerRulesKind is the kind of the documents that drive the
// authorizer in cases and suites.
var authorizerRulesKind = schema.GroupVersionKind{Group: "vapkit.dev", Version: "v1alpha1", Kind: "AuthorizerRules"}

// compiledSuite is a suite ready to run: its cluster compiled once.
type compiledSuite struct {
	ls     *loadedSuite
	tester *policy.Tester
	m      *manifest.Set
	// crs checks custom resources against their CRD's schema.
	crs *typecheck.CustomResourceValidator
}

// compileSuite reads the suite's files (strictly) and compiles its
// policies once. What the API server would refuse is an error naming the
// file and line.
func (ls *loadedSuite) compile(env *celenv.Env) (*compiledSuite, error) {
	all := &manifest.Set{}
	type fileDocs struct {
		file string
		docs []manifest.Document
	}
	var read []fileDocs
	where := map[k8sruntime.Object]located{}
	var rules casefile.RuleAuthorizer
	for _, f := range ls.sources {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := manifest.DecodeWith(data, f, manifest.Options{Strict: true})
		if err != nil {
			return nil, err
		}
		m, err := manifest.Load(data, f)
		if err != nil {
			return nil, err
		}
		indexDocs(f, docs, m, where)
		read = append(read, fileDocs{f, docs})
		all.Policies = append(all.Policies, m.Policies...)
		all.Bindings = append(all.Bindings, m.Bindings...)
		all.MutatingPolicies = append(all.MutatingPolicies, m.MutatingPolicies...)
		all.MutatingBindings = append(all.MutatingBindings, m.MutatingBindings...)
		all.Namespaces = append(all.Namespaces, m.Namespaces...)
		all.CRDs = append(all.CRDs, m.CRDs...)
		for _, o := range m.Objects {
			u, ok := o.(*unstructured.Unstructured)
			if !ok || u.GroupVersionKind() != authorizerRulesKind {
				all.Objects = append(all.Objects, o)
				continue
			}
			raw, err := json.Marshal(u.Object["rules"])
			if err == nil {
				var rs casefile.RuleAuthorizer
				if err = json.Unmarshal(raw, &rs); err == nil {
					rules = append(rules, rs...)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("%s: AuthorizerRules: rules: %w", f, err)
			}
		}
		if len(m.Reviews) > 0 {
			return nil, fmt.Errorf("%s: a suite's files hold no AdmissionReview; write the request as a test", f)
		}
	}
	opts := policy.Options{Env: env}
	if rules != nil {
		opts.Authorizer = rules
	}
	// NewTester refuses what policy.Refusals lists; only then are the
	// refusals computed again, to name their files and lines.
	t, err := policy.NewTester(all, opts)
	if err != nil {
		if rs := locateRefusals(policy.Refusals(env, all), where); len(rs) > 0 {
			return nil, fmt.Errorf("the API server would refuse to create the suite's objects:\n%s", strings.Join(rs, "\n"))
		}
		return nil, fmt.Errorf("%s: %w", ls.file, err)
	}
	crs, err := typecheck.NewCustomResourceValidator(all.CRDs...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ls.file, err)
	}
	var rs []string
	for _, r := range read {
		rs = append(rs, customResourceRefusals(crs, r.file, r.docs, false)...)
	}
	if len(rs) > 0 {
		return nil, fmt.Errorf("the API server would refuse to create the suite's objects:\n%s", strings.Join(rs, "\n"))
	}
	return &compiledSuite{ls: ls, tester: t, m: all, crs: crs}, nil
}

// located is where an object was read.
type located struct {
	file string
	doc  manifest.Document
}

// indexDocs records, for the policies and bindings of m (read from file),
// the document each was read from: they are the file's documents of those
// kinds, in order.
func indexDocs(file string, docs []manifest.Document, m *manifest.Set, where map[k8sruntime.Object]located) {
	var pi, bi, mpi, mbi int
	for _, d := range docs {
		switch d.Object.(type) {
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			if mpi < len(m.MutatingPolicies) {
				where[m.MutatingPolicies[mpi]] = located{file, d}
			}
			mpi++
		case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
			if mbi < len(m.MutatingBindings) {
				where[m.MutatingBindings[mbi]] = located{file, d}
			}
			mbi++
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			if pi < len(m.Policies) {
				where[m.Policies[pi]] = located{file, d}
			}
			pi++
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			if bi < len(m.Bindings) {
				where[m.Bindings[bi]] = located{file, d}
			}
			bi++
		}
	}
}

// locateRefusals renders refusals as "file:line: problem".
func locateRefusals(rs []policy.Refusal, where map[k8sruntime.Object]located) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		if l, ok := where[r.Object]; ok {
			out[i] = fmt.Sprintf("%s:%d: %v", l.file, l.doc.Locate(r.Err.Field), r)
		} else {
			out[i] = r.Error()
		}
	}
	return out
}

// testOutcome is the result of one test with the decision behind it, for
// coverage.
type testOutcome struct {
	res      caseResult
	decision *policy.Decision
}

// runSuiteFile runs the tests of a suite whose name matches filter,
// concurrently over one compiled evaluator, and returns their results in
// file order.
func (r *runner) runSuiteFile(ctx context.Context, ls *loadedSuite, filter *regexp.Regexp) (suite, *coverage) {
	s := suite{Path: ls.file}
	cs, err := ls.compile(r.opts.Env)
	if err != nil {
		s.Cases = []caseResult{{Name: suiteName(ls), File: ls.file, Status: statusError, Error: err.Error()}}
		s.Summary.add(statusError)
		return s, nil
	}
	var tests []*SuiteTest
	for i := range ls.suite.Tests {
		if t := &ls.suite.Tests[i]; filter == nil || filter.MatchString(t.Name) {
			tests = append(tests, t)
		}
	}
	outs := make([]testOutcome, len(tests))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(r.parallel, len(tests))) {
		wg.Go(func() {
			for i := range work {
				outs[i] = cs.run(ctx, tests[i])
			}
		})
	}
	for i := range tests {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, o := range outs {
		s.Cases = append(s.Cases, o.res)
		s.Summary.add(o.res.Status)
	}
	return s, measureCoverage(ls.file, cs.m, outs)
}

// suiteName is the suite's metadata.name, or its file.
func suiteName(ls *loadedSuite) string {
	if ls.suite.Metadata.Name != "" {
		return ls.suite.Metadata.Name
	}
	return ls.file
}

// run runs one test.
func (cs *compiledSuite) run(ctx context.Context, t *SuiteTest) testOutcome {
	file := cs.ls.file
	res := caseResult{Name: t.Name, File: fmt.Sprintf("%s:%d", file, t.line), Expectation: file, inSuite: true}
	fail := func(err error) testOutcome {
		res.Status, res.Error = statusError, err.Error()
		return testOutcome{res: res}
	}
	if t.Expect.e.skip != "" {
		res.Status, res.SkipReason = statusSkip, t.Expect.e.skip
		return testOutcome{res: res}
	}
	req, err := cs.request(t)
	if err != nil {
		return fail(err)
	}
	d, err := cs.tester.Evaluator().Evaluate(ctx, req)
	if err != nil {
		return fail(fmt.Errorf("%s:%d: %w", file, t.line, err))
	}
	got := casefile.Project(d.AdmissionResponse("vapkit-suite"))
	res.Response = &got
	raw, err := objectJSON(req.Object)
	if err != nil {
		return fail(fmt.Errorf("%s:%d: %w", file, t.line, err))
	}
	m, err := mutatedOf(raw, d)
	if err != nil {
		return fail(fmt.Errorf("%s:%d: %w", file, t.line, err))
	}
	for _, mm := range t.Expect.e.check(got, m) {
		res.Failures = append(res.Failures, mm.failure(file))
	}
	res.Status = statusPass
	if len(res.Failures) > 0 {
		res.Status = statusFail
	}
	return testOutcome{res: res, decision: d}
}

// request builds the request of a test: kind, resource, name and namespace
// come from the object through the resource mapper (built-in kinds and the
// suite's CRDs), unless the test gives kind and resource.
func (cs *compiledSuite) request(t *SuiteTest) (*policy.Request, error) {
	at := func(err error) error { return fmt.Errorf("%s:%d: %w", cs.ls.file, t.line, err) }
	op, err := t.operation()
	if err != nil {
		return nil, at(err)
	}
	var obj, old *unstructured.Unstructured
	if t.Object != nil {
		if obj, err = cs.ls.object(t.Object, "object"); err != nil {
			return nil, err
		}
	}
	if t.OldObject != nil {
		if old, err = cs.ls.object(t.OldObject, "oldObject"); err != nil {
			return nil, err
		}
	}
	if t.Namespace != "" {
		for _, o := range []*unstructured.Unstructured{obj, old} {
			switch {
			case o == nil:
			case o.GetNamespace() == "":
				o.SetNamespace(t.Namespace)
			case o.GetNamespace() != t.Namespace:
				return nil, at(fmt.Errorf("namespace: the object is in namespace %q, the test says %q", o.GetNamespace(), t.Namespace))
			}
		}
	}
	// The API server validates a created or updated custom resource
	// against its CRD's schema, and a created built-in object's metadata,
	// after mutating admission and before validating admission; on update
	// it lets through invalid values the old object already held
	// (ratcheting). With mutating policies the
	// object validated is the mutated one, which is not checked here.
	switch {
	case len(cs.m.MutatingPolicies) > 0:
	case obj != nil && op == admissionv1.Create:
		err = cs.ls.refused(t.Object, "object", obj, createErrors(cs.crs, obj, ""))
	case obj != nil && op == admissionv1.Update && t.SubResource == "":
		err = cs.ls.refused(t.Object, "object", obj, cs.crs.ValidateUpdate(inNamespace(cs.crs, obj, ""), old))
	}
	if err != nil {
		return nil, err
	}
	// Policies see custom resources as the server decodes them: pruned
	// and defaulted by their schema. (Built-in kinds are defaulted by
	// Evaluator.Request.)
	obj, old = cs.crs.Decode(obj), cs.crs.Decode(old)
	opts := policy.RequestOptions{UID: "vapkit-suite", UserInfo: t.userInfo(), SubResource: t.SubResource, DryRun: t.DryRun}
	if t.Resource != nil {
		opts.Resource = schema.GroupVersionResource(*t.Resource)
	} else if t.SubResource != "" || op == admissionv1.Connect {
		return nil, at(fmt.Errorf("resource is required with a subResource or operation CONNECT"))
	}
	var o, oo k8sruntime.Object
	if obj != nil {
		o = obj
	}
	if old != nil {
		oo = old
	}
	// The evaluator's mapper knows the built-in kinds and the suite's CRDs.
	req, err := cs.tester.Evaluator().Request(op, o, oo, opts)
	if err != nil {
		return nil, at(err)
	}
	return req, nil
}
