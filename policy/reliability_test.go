package policy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Upstream's texts for the two cost limits.
const (
	perCallLimitMsg = "operation cancelled: actual cost limit exceeded"
	budgetMsg       = "validation failed due to running out of cost budget, no further validation rules will be run"
)

// maxEvalTime bounds one evaluation of an adversarial policy. The budget
// implies well under a second; the bound is loose for -race on a busy CI.
const maxEvalTime = 30 * time.Second

// vap builds a policy matching deployments with failurePolicy Fail; edit
// changes its spec.
func vap(name string, edit func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	fail := admissionregistrationv1.Fail
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
				MatchPolicy:       ptr(admissionregistrationv1.Equivalent),
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
						},
					},
				}},
			},
		},
	}
	if edit != nil {
		edit(&p.Spec)
	}
	return p
}

// bind binds policy with the given actions (Deny when none).
func bind(name, policyName string, actions ...admissionregistrationv1.ValidationAction) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	if len(actions) == 0 {
		actions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	}
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policyName, ValidationActions: actions},
	}
}

// deployRequest is a cluster-wide CREATE of a Deployment whose object is obj
// (a default object when nil); no namespace lookup happens.
func deployRequest(obj map[string]any) *policy.Request {
	if obj == nil {
		obj = map[string]any{"spec": map[string]any{"replicas": int64(3)}}
	}
	obj["apiVersion"], obj["kind"] = "apps/v1", "Deployment"
	if _, ok := obj["metadata"]; !ok {
		obj["metadata"] = map[string]any{"name": "web"}
	}
	return &policy.Request{
		Operation: admissionv1.Create,
		Kind:      schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      "web",
		Object:    &unstructured.Unstructured{Object: obj},
	}
}

func validations(exprs ...string) []admissionregistrationv1.Validation {
	out := make([]admissionregistrationv1.Validation, len(exprs))
	for i, e := range exprs {
		out[i] = admissionregistrationv1.Validation{Expression: e}
	}
	return out
}

func mustCompile(t *testing.T, ps []*admissionregistrationv1.ValidatingAdmissionPolicy, bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, opts policy.Options) *policy.Evaluator {
	t.Helper()
	ev, err := policy.Compile(ps, bs, opts)
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	return ev
}

// nestedComprehension is n nested all() over a list of size elements.
func nestedComprehension(n, size int) string {
	elems := make([]string, size)
	for i := range elems {
		elems[i] = fmt.Sprint(i)
	}
	list := "[" + strings.Join(elems, ",") + "]"
	expr := "true"
	for i := n; i > 0; i-- {
		expr = fmt.Sprintf("%s.all(x%d, %s)", list, i, expr)
	}
	return expr
}

// TestAdversarialPolicies checks that hostile policies are stopped by the
// cost limits with upstream's messages, in bounded time and memory, and
// that failurePolicy Fail then denies.
func TestAdversarialPolicies(t *testing.T) {
	doubling := func(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		spec.Variables = append(spec.Variables, admissionregistrationv1.Variable{Name: "s0", Expression: "'0123456789abcdef'"})
		for i := 1; i <= 40; i++ {
			spec.Variables = append(spec.Variables, admissionregistrationv1.Variable{
				Name: fmt.Sprintf("s%d", i), Expression: fmt.Sprintf("variables.s%d + variables.s%d", i-1, i-1),
			})
		}
		spec.Validations = validations("variables.s40.size() > 0")
	}
	chain := func(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		// Each variable scans a 100 kB string (cost about 10,000, cheap in
		// time even under -race): together far over the budget, which
		// stops them after about a thousand. Compiling them is most of
		// the test's time, so -short compiles 1,500: still over.
		n := 3000
		if testing.Short() {
			n = 1500
		}
		spec.Variables = append(spec.Variables, admissionregistrationv1.Variable{Name: "v0", Expression: "0"})
		for i := 1; i < n; i++ {
			spec.Variables = append(spec.Variables, admissionregistrationv1.Variable{
				Name:       fmt.Sprintf("v%d", i),
				Expression: fmt.Sprintf("variables.v%d + (object.metadata.annotations.big.contains('b') ? 0 : 1)", i-1),
			})
		}
		spec.Validations = validations(fmt.Sprintf("variables.v%d > 0", n-1))
	}
	deep := strings.Repeat("[", 500) + strings.Repeat("]", 500) + ".size() == 1"

	tests := []struct {
		name string
		edit func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)
		obj  map[string]any
		want string // substring of the denial message
	}{
		{
			name: "exponential comprehension",
			edit: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
				s.Validations = validations(nestedComprehension(8, 10))
			},
			want: "resulted in error: " + perCallLimitMsg,
		},
		{
			name: "huge string building",
			edit: doubling,
			want: perCallLimitMsg,
		},
		{
			name: "huge list building",
			edit: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
				s.Validations = validations("lists.range(100000).map(i, lists.range(100)).size() > 0")
			},
			want: perCallLimitMsg,
		},
		{
			name: "deep nesting",
			edit: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
				s.Validations = validations(deep)
			},
			want: "compilation error: compilation failed:",
		},
		{
			name: "regex heavy",
			edit: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
				s.Validations = validations("lists.range(10000).all(i, object.metadata.annotations.big.matches('^(a|aa)*(b|c)?a*$'))")
			},
			obj:  map[string]any{"metadata": map[string]any{"name": "web", "annotations": map[string]any{"big": strings.Repeat("a", 100_000)}}},
			want: perCallLimitMsg,
		},
		{
			name: "thousands of variables",
			edit: chain,
			obj:  map[string]any{"metadata": map[string]any{"name": "web", "annotations": map[string]any{"big": strings.Repeat("a", 100_000)}}},
			want: budgetMsg,
		},
		{
			name: "expensive match condition",
			edit: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
				s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: nestedComprehension(8, 10)}}
				s.Validations = validations("true")
			},
			want: perCallLimitMsg,
		},
		{
			name: "expensive message expression",
			edit: func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
				s.Validations = []admissionregistrationv1.Validation{{
					Expression:        "false",
					MessageExpression: "string(lists.range(300).map(i, lists.range(300).map(j, i * j)).size())",
				}}
			},
			// As upstream: a messageExpression error other than the
			// budget falls back to the static message.
			want: "denied request: failed expression: false",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if raceEnabled && tc.name != "deep nesting" {
				t.Skip("spends a whole cost limit; too slow under the race detector, runs without it")
			}
			// The slowest per-call runs; other subtests and the
			// cost-per-call-limit case reach the same limit with -short.
			if testing.Short() && (tc.name == "exponential comprehension" || tc.name == "regex heavy") {
				t.Skip("spends the per-call cost limit for a second; runs without -short")
			}
			ev := mustCompile(t, []*admissionregistrationv1.ValidatingAdmissionPolicy{vap("p", tc.edit)},
				[]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bind("b", "p")}, policy.Options{})
			start := time.Now()
			d, err := ev.Evaluate(t.Context(), deployRequest(tc.obj))
			elapsed := time.Since(start)
			t.Logf("Evaluate() took %v", elapsed)
			if err != nil {
				t.Fatalf("Evaluate() error = %v", err)
			}
			if elapsed > maxEvalTime {
				t.Errorf("Evaluate() took %v, want at most %v", elapsed, maxEvalTime)
			}
			if d.Allowed || d.Status == nil || !strings.Contains(d.Status.Message, tc.want) {
				t.Fatalf("Evaluate() = allowed %v, status %+v, want a denial containing %q", d.Allowed, d.Status, tc.want)
			}
			if d.Status.Code != 422 || d.Status.Reason != metav1.StatusReasonInvalid {
				t.Errorf("Evaluate() status = %d %s, want 422 Invalid", d.Status.Code, d.Status.Reason)
			}
		})
	}
}

// TestCostLimitsUnderIgnore checks that an expensive policy under
// failurePolicy Ignore admits the request and says why in the trace.
func TestCostLimitsUnderIgnore(t *testing.T) {
	if raceEnabled {
		t.Skip("spends a whole cost limit; too slow under the race detector, runs without it")
	}
	ignore := admissionregistrationv1.Ignore
	p := vap("p", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.FailurePolicy = &ignore
		s.Validations = validations(nestedComprehension(8, 10))
	})
	ev := mustCompile(t, []*admissionregistrationv1.ValidatingAdmissionPolicy{p},
		[]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bind("b", "p")}, policy.Options{})
	d, err := ev.Evaluate(t.Context(), deployRequest(nil))
	if err != nil {
		t.Fatalf("Evaluate() error = %v", err)
	}
	if !d.Allowed {
		t.Fatalf("Evaluate() Allowed = false, want true: %+v", d.Status)
	}
	if len(d.Trace) != 1 || d.Trace[0].Outcome != policy.Errored || len(d.Trace[0].Expressions) != 1 ||
		!strings.Contains(d.Trace[0].Expressions[0].Err, perCallLimitMsg) {
		t.Fatalf("Evaluate() Trace = %+v, want one Errored entry with the cost error", d.Trace)
	}
}

// TestEvaluateCancel checks that a done context stops evaluation promptly
// and Evaluate returns nil and ctx.Err().
func TestEvaluateCancel(t *testing.T) {
	slow := func(n int) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return vap(fmt.Sprintf("slow-%02d", n), func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			exprs := make([]string, 9)
			for i := range exprs {
				exprs[i] = fmt.Sprintf("lists.range(300).all(i, lists.range(300).all(j, i + j >= -%d))", i)
			}
			s.Validations = validations(exprs...)
		})
	}
	var ps []*admissionregistrationv1.ValidatingAdmissionPolicy
	var bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for i := range 20 {
		p := slow(i)
		ps = append(ps, p)
		bs = append(bs, bind(p.Name+"-b", p.Name))
	}
	ev := mustCompile(t, ps, bs, policy.Options{})

	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		d, err := ev.Evaluate(ctx, deployRequest(nil))
		if d != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Evaluate() = %v, %v, want nil, context.Canceled", d, err)
		}
	})
	t.Run("cancelled during", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		timer := time.AfterFunc(50*time.Millisecond, cancel)
		defer timer.Stop()
		start := time.Now()
		d, err := ev.Evaluate(ctx, deployRequest(nil))
		stopped := time.Since(start)
		if d != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Evaluate() = %v, %v, want nil, context.Canceled", d, err)
		}
		// 20 policies at the full budget take many seconds; a cancelled
		// evaluation stops at the next interrupt check.
		if stopped > 5*time.Second {
			t.Errorf("Evaluate() returned %v after start, want soon after the 50ms cancel", stopped)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		d, err := ev.Evaluate(ctx, deployRequest(nil))
		if d != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Evaluate() = %v, %v, want nil, context.DeadlineExceeded", d, err)
		}
	})
	t.Run("cancelled in plug-in", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		ns := matching.NamespaceGetterFunc(func(ctx context.Context, name string) (*corev1.Namespace, error) {
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		})
		p := vap("p", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations = validations("true") })
		ev := mustCompile(t, []*admissionregistrationv1.ValidatingAdmissionPolicy{p},
			[]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bind("b", "p")}, policy.Options{Namespaces: ns})
		req := deployRequest(nil)
		req.Namespace = "default"
		d, err := ev.Evaluate(ctx, req)
		if d != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("Evaluate() = %v, %v, want nil, context.Canceled", d, err)
		}
	})
}

// TestHostileRequests feeds requests that are huge, deeply nested or not
// valid UTF-8: each gets a decision or a clear error, never a panic.
func TestHostileRequests(t *testing.T) {
	p := vap("p", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations = []admissionregistrationv1.Validation{
			{Expression: "!has(object.metadata.annotations) || object.metadata.annotations.all(k, object.metadata.annotations[k].size() < 100)",
				MessageExpression: "'too long: ' + object.metadata.annotations.map(k, k).join(',')"},
		}
	})
	ev := mustCompile(t, []*admissionregistrationv1.ValidatingAdmissionPolicy{p},
		[]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bind("b", "p")}, policy.Options{})

	bigSize := 20 << 20
	if testing.Short() {
		bigSize = 1 << 20
	}
	manyKeys := map[string]any{}
	// cel-go's cost tracker is quadratic in the iterations of some
	// comprehensions (refValStack.drop), so 100,000 keys take seconds even
	// though the cost stays under the limit; 10,000 keep the test fast.
	for i := range 10_000 {
		manyKeys[fmt.Sprintf("k%06d", i)] = "v"
	}
	tests := []struct {
		name        string
		raw         string // request object as raw JSON, or
		obj         map[string]any
		wantAllowed bool
		wantErr     string // substring of the Evaluate or decode error
		wantMsg     string // substring of the denial
	}{
		{name: "tens of MB string", obj: map[string]any{"metadata": map[string]any{"name": "web", "annotations": map[string]any{"big": strings.Repeat("x", bigSize)}}},
			wantMsg: "too long: big"},
		{name: "many keys", obj: map[string]any{"metadata": map[string]any{"name": "web", "annotations": manyKeys}}, wantAllowed: true},
		{name: "invalid utf-8", obj: map[string]any{"metadata": map[string]any{"name": "web", "annotations": map[string]any{"\xff\xfe": strings.Repeat("\xff", 200)}}},
			wantMsg: "too long: "},
		{name: "deeply nested json", raw: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":` + strings.Repeat(`{"a":`, 20_000) + "1" + strings.Repeat("}", 20_000) + "}",
			wantErr: "request.object"},
		{name: "moderately nested json", raw: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":` + strings.Repeat(`{"a":`, 500) + "1" + strings.Repeat("}", 500) + "}",
			wantAllowed: true},
		{name: "wrong types", raw: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","annotations":{"a":1}}}`,
			wantErr: "request.object"},
		{name: "invalid json", raw: `{"apiVersion":"apps/v1","kind":"Deployment",`, wantErr: "request.object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := deployRequest(tc.obj)
			if tc.raw != "" {
				r, err := policy.RequestFromAdmission(&admissionv1.AdmissionRequest{
					Operation: admissionv1.Create,
					Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
					Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
					Name:      "web",
					Object:    runtime.RawExtension{Raw: []byte(tc.raw)},
				})
				if err != nil {
					if tc.wantErr == "" || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("RequestFromAdmission() error = %v, want one containing %q", err, tc.wantErr)
					}
					return
				}
				req = r
			}
			start := time.Now()
			d, err := ev.Evaluate(t.Context(), req)
			if err != nil {
				t.Fatalf("Evaluate() error = %v", err)
			}
			if tc.wantErr != "" {
				t.Fatalf("Evaluate() = %+v, want error %q", d, tc.wantErr)
			}
			if time.Since(start) > maxEvalTime {
				t.Errorf("Evaluate() took %v", time.Since(start))
			}
			if d.Allowed != tc.wantAllowed {
				t.Fatalf("Evaluate() Allowed = %v, want %v (%+v)", d.Allowed, tc.wantAllowed, d.Status)
			}
			if tc.wantMsg != "" && !strings.Contains(d.Status.Message, tc.wantMsg) {
				t.Errorf("Evaluate() message = %q, want it to contain %q", d.Status.Message, tc.wantMsg)
			}
		})
	}
}

// TestHostileManifests checks that malformed policies get errors that name
// the file, the document and the field.
func TestHostileManifests(t *testing.T) {
	const head = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n"
	tests := []struct {
		name, in string
		want     []string // substrings of the error
	}{
		{name: "expression not a string", in: head + "spec:\n  validations:\n  - expression: [1]\n",
			want: []string{"p.yaml:", "spec.validations[0].expression"}},
		{name: "validations not a list", in: head + "spec:\n  validations: {expression: 'true'}\n",
			want: []string{"p.yaml:", "spec.validations"}},
		{name: "failurePolicy not a string", in: head + "spec:\n  failurePolicy: 3\n",
			want: []string{"p.yaml:", "spec.failurePolicy"}},
		{name: "unknown field", in: head + "spec:\n  validatons: []\n",
			want: []string{"p.yaml:", "validatons"}},
		{name: "invalid utf-8", in: head + "spec:\n  validations:\n  - expression: \"\xff\"\n",
			want: []string{"p.yaml:"}},
		{name: "deep nesting", in: head + "spec: " + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + "\n",
			want: []string{"p.yaml:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := manifest.Load([]byte(tc.in), "p.yaml")
			if err == nil {
				t.Fatalf("Load() = %+v, want an error", m)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load() error = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestCompileHostile checks duplicate names, nil entries and missing
// references: errors with field paths, and nothing silently dropped.
func TestCompileHostile(t *testing.T) {
	ok := func(name string) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return vap(name, func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations = validations("true") })
	}
	mapper, err := manifest.NewResourceMapper()
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"plural": "widgets", "kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}},
		},
	}}
	tests := []struct {
		name    string
		ps      []*admissionregistrationv1.ValidatingAdmissionPolicy
		bs      []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
		opts    policy.Options
		wantErr string
	}{
		{name: "resources and crds", opts: policy.Options{Resources: mapper, CRDs: []*unstructured.Unstructured{crd}},
			wantErr: "options: set Resources or CRDs, not both"},
		{name: "crd twice", opts: policy.Options{CRDs: []*unstructured.Unstructured{crd, crd}},
			wantErr: "CRD widgets.example.com: defined twice"},
		{name: "nil crd", opts: policy.Options{CRDs: []*unstructured.Unstructured{nil}},
			wantErr: "crds[0]: must not be nil"},
		{name: "duplicate policy", ps: []*admissionregistrationv1.ValidatingAdmissionPolicy{ok("p"), ok("p")},
			wantErr: `policies[1].metadata.name: Duplicate value: "p"`},
		{name: "duplicate binding", ps: []*admissionregistrationv1.ValidatingAdmissionPolicy{ok("p")},
			bs:      []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bind("b", "p"), bind("b", "p")},
			wantErr: `bindings[1].metadata.name: Duplicate value: "b"`},
		{name: "nil policy", ps: []*admissionregistrationv1.ValidatingAdmissionPolicy{nil},
			wantErr: "policies[0]: Required value"},
		{name: "nil binding", bs: []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{nil},
			wantErr: "bindings[0]: Required value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := policy.Compile(tc.ps, tc.bs, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Compile() = %v, %v, want error containing %q", ev, err, tc.wantErr)
			}
			if ev != nil {
				t.Errorf("Compile() returned an Evaluator with an error")
			}
		})
	}
}

// TestTraceNothingDropped checks that every policy and binding is in the
// trace, including those not matched, not bound, or skipped.
func TestTraceNothingDropped(t *testing.T) {
	ignore := admissionregistrationv1.Ignore
	pods := func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints.ResourceRules[0].APIGroups = []string{""}
		s.MatchConstraints.ResourceRules[0].Resources = []string{"pods"}
		s.Validations = validations("true")
	}
	ps := []*admissionregistrationv1.ValidatingAdmissionPolicy{
		vap("a-pods", pods),
		vap("b-unbound", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations = validations("false") }),
		vap("c-mc-ignore", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.FailurePolicy = &ignore
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "err", Expression: "object.nope == 1"}}
			s.Validations = validations("false")
		}),
		vap("d-mc-false", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "no", Expression: "false"}}
			s.Validations = validations("false")
		}),
		vap("e-ignored-error", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.FailurePolicy = &ignore
			s.Validations = validations("object.nope == 1")
		}),
		vap("f-binding-selector", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.Validations = validations("false") }),
		vap("g-bad-paramkind", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "a/b/c", Kind: "X"}
			s.Validations = validations("false")
		}),
	}
	selective := bind("f-b", "f-binding-selector")
	selective.Spec.MatchResources = &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}}
	bs := []*admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		bind("a-b", "a-pods"), bind("c-b", "c-mc-ignore"), bind("d-b", "d-mc-false"), bind("e-b", "e-ignored-error"),
		selective, bind("g-b", "g-bad-paramkind"), bind("z-orphan", "missing"),
	}
	// By default the policies the index rules out (a-pods) are left out.
	d, err := mustCompile(t, ps, bs, policy.Options{}).Evaluate(t.Context(), deployRequest(nil))
	if err != nil {
		t.Fatalf("Evaluate() error = %v", err)
	}
	if slices.ContainsFunc(d.Trace, func(e policy.PolicyTrace) bool { return e.Policy == "a-pods" }) {
		t.Errorf("Evaluate() Trace lists a-pods without Options.TraceUnmatched: %v", d.Trace)
	}
	ev := mustCompile(t, ps, bs, policy.Options{TraceUnmatched: true})
	d, err = ev.Evaluate(t.Context(), deployRequest(nil))
	if err != nil {
		t.Fatalf("Evaluate() error = %v", err)
	}
	if !d.Allowed {
		t.Fatalf("Evaluate() Allowed = false: %+v", d.Status)
	}
	type entry struct {
		policy, binding string
		outcome         policy.Outcome
		err             string // substring of Err; "" for no Err
	}
	want := []entry{
		{"a-pods", "", policy.NotMatched, ""},
		{"c-mc-ignore", "c-b", policy.NotMatched, "match condition error ignored under failurePolicy Ignore"},
		{"d-mc-false", "d-b", policy.NotMatched, ""},
		{"e-ignored-error", "e-b", policy.Errored, ""},
		{"f-binding-selector", "f-b", policy.NotMatched, ""},
		{"b-unbound", "", policy.Skipped, "policy has no bindings"},
		{"g-bad-paramkind", "", policy.Skipped, "policy is not enforced"},
		{"g-bad-paramkind", "g-b", policy.Skipped, "policy is not enforced"},
		{"missing", "z-orphan", policy.Skipped, "binding's policy not found"},
	}
	var got []entry
	for _, tr := range d.Trace {
		e := entry{policy: tr.Policy, binding: tr.Binding, outcome: tr.Outcome}
		if tr.Err != nil {
			e.err = tr.Err.Error()
		}
		got = append(got, e)
	}
	if len(got) != len(want) {
		t.Fatalf("Evaluate() Trace = %+v, want %d entries %+v", got, len(want), want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.policy != w.policy || g.binding != w.binding || g.outcome != w.outcome ||
			(w.err == "") != (g.err == "") || !strings.Contains(g.err, w.err) {
			t.Errorf("Trace[%d] = %+v, want %+v", i, g, w)
		}
	}
	if e := d.Trace[3]; len(e.Expressions) != 1 || e.Expressions[0].Err == "" {
		t.Errorf("Trace[3].Expressions = %+v, want the ignored error", e.Expressions)
	}

	t.Run("exempt request", func(t *testing.T) {
		req := &policy.Request{
			Operation: admissionv1.Create,
			Kind:      schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"},
			Resource:  schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
			Name:      "x",
		}
		d, err := ev.Evaluate(t.Context(), req)
		if err != nil {
			t.Fatalf("Evaluate() error = %v", err)
		}
		if !d.Allowed || len(d.Trace) != len(ps)+2 {
			t.Fatalf("Evaluate() = allowed %v, trace %v; want allowed with an entry per policy and orphan binding", d.Allowed, d.Trace)
		}
		for _, tr := range d.Trace {
			if tr.Outcome != policy.Skipped || tr.Err == nil {
				t.Errorf("Trace entry %v, want Skipped with a reason", tr)
			}
		}
	})
	t.Run("namespace lookup fails", func(t *testing.T) {
		req := deployRequest(nil)
		req.Namespace = "gone"
		d, err := ev.Evaluate(t.Context(), req)
		if err != nil {
			t.Fatalf("Evaluate() error = %v", err)
		}
		if d.Allowed || d.Status.Code != 404 {
			t.Fatalf("Evaluate() = allowed %v, status %+v, want a 404 denial", d.Allowed, d.Status)
		}
		found := false
		for _, tr := range d.Trace {
			if tr.Outcome == policy.Errored && tr.Err != nil && strings.Contains(tr.Err.Error(), "namespace lookup failed") {
				found = true
			}
		}
		if !found {
			t.Errorf("Evaluate() Trace = %v, want the failed namespace lookup", d.Trace)
		}
	})
}

// TestDeterministicMapOrder checks that comprehensions over maps see keys in
// sorted order, so messages and costs are the same on every evaluation.
func TestDeterministicMapOrder(t *testing.T) {
	p := vap("p", func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.Validations = []admissionregistrationv1.Validation{{
			Expression:        "false",
			MessageExpression: "object.metadata.labels.map(k, k).join(',') + ';' + object.metadata.labels.transformList(k, v, v).join(',')",
		}}
	})
	ev := mustCompile(t, []*admissionregistrationv1.ValidatingAdmissionPolicy{p},
		[]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{bind("b", "p")}, policy.Options{})
	labels := map[string]any{}
	var keys []string
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		labels[k] = fmt.Sprintf("v%02d", i)
		keys = append(keys, k)
	}
	vals := strings.ReplaceAll(strings.Join(keys, ","), "k", "v")
	want := strings.Join(keys, ",") + ";" + vals
	for range 20 {
		d, err := ev.Evaluate(t.Context(), deployRequest(map[string]any{"metadata": map[string]any{"name": "web", "labels": labels}}))
		if err != nil {
			t.Fatalf("Evaluate() error = %v", err)
		}
		if d.Status == nil || !strings.HasSuffix(d.Status.Message, ": "+want) {
			t.Fatalf("Evaluate() status = %+v, want message ending in %q", d.Status, want)
		}
	}
}
