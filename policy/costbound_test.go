package policy_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/casefile"
	"github.com/vapkit/vapkit/internal/costcheck"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// TestCostBounds evaluates every case with cost tracking and checks each
// measured cost against the estimated bound that would have let the
// expression run untracked: an estimate below a measurement would let an
// untracked evaluation miss a limit the API server enforces.
func TestCostBounds(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	disable := costcheck.Enable()
	defer disable()
	costcheck.Take()
	before := costcheck.Checked()
	for _, f := range files {
		if slowCase(strings.TrimSuffix(filepath.Base(f), ".yaml")) != "" {
			continue
		}
		c, err := casefile.ParseFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := c.Review(t.Context()); err != nil {
			t.Fatalf("%s: Review() error = %v", f, err)
		}
		for _, v := range costcheck.Take() {
			t.Errorf("%s: %v", strings.TrimSuffix(filepath.Base(f), ".yaml"), v)
		}
	}
	if n := costcheck.Checked() - before; n < 100 {
		t.Errorf("only %d measured costs had a bound to check", n)
	}
}

// heavyRegex is a regular expression of about 8,000 bytes: matching it
// costs 2,000 per tenth of the string's length. An expression that also
// reads a 600-byte annotation has its inputs in the 1,024 size class, where
// matching the name is estimated at about 206,000 and measured at 2,000 on
// a short name.
var heavyRegex = "^(" + strings.Repeat("a|", 4000) + "b)$"

// evaluateHeavy evaluates, with evaluateConfigMapCreate, the CREATE of a
// ConfigMap named name with a 600-byte annotation, first untracked where
// the estimates allow, then with every cost measured.
func evaluateHeavy(t *testing.T, specBody, name string) (fast, measured *policy.Decision) {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{"note": strings.Repeat("x", 600)}},
	}
	return evaluateConfigMapCreate(t, specBody, cm, policy.Options{}),
		evaluateConfigMapCreate(t, specBody, cm, policy.Options{MeasureCost: true})
}

// evaluateConfigMapCreate loads a policy with the given spec body (after
// matchConstraints for CREATE of ConfigMaps) bound with Deny, and evaluates
// the CREATE of cm.
func evaluateConfigMapCreate(t *testing.T, specBody string, cm *corev1.ConfigMap, opts policy.Options) *policy.Decision {
	t.Helper()
	doc := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: cm
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
` + specBody + `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: cm
spec:
  policyName: cm
  validationActions: [Deny]
`
	m, err := manifest.Load([]byte(doc), "cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tester, err := policy.NewTester(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	req, err := tester.Request(admissionv1.Create, cm, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tester.Evaluator().Evaluate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestUntrackedRetry builds a policy whose match conditions are each well
// below the per-call limit by estimate but together above the match
// conditions' budget for the request's input sizes, while their measured
// costs are small: the untracked pass must give way to a tracked one that
// admits the request, as the API server does.
func TestUntrackedRetry(t *testing.T) {
	var body strings.Builder
	body.WriteString("  matchConditions:\n")
	for i := range 13 { // 13 × 206,000 > 2,500,000
		fmt.Fprintf(&body, "    - name: c%d\n      expression: \"object.metadata.annotations.note != '' && !object.metadata.name.matches('%s')\"\n", i, heavyRegex)
	}
	body.WriteString("  validations:\n  - expression: \"object.metadata.name == 'web'\"\n")
	fast, measured := evaluateHeavy(t, body.String(), "other")
	if fast.Allowed || measured.Allowed {
		t.Fatalf("Allowed = %v (untracked first), %v (measured); want a denial by the validation", fast.Allowed, measured.Allowed)
	}
	if diff := cmp.Diff(measured.Status, fast.Status); diff != "" {
		t.Errorf("status differs (-measured +untracked first):\n%s", diff)
	}
	if len(fast.Trace) != 1 || len(measured.Trace) != 1 {
		t.Fatalf("traces = %v / %v, want one entry each", fast.Trace, measured.Trace)
	}
	// The retry measured the match conditions: the same cost as MeasureCost.
	mcCost := func(tr policy.PolicyTrace) (cost int64, estimated bool) {
		for _, e := range tr.Expressions {
			if strings.HasPrefix(e.Path.String(), "spec.matchConditions") {
				cost += e.Cost
				estimated = estimated || e.CostEstimated
			}
		}
		return cost, estimated
	}
	fc, fe := mcCost(fast.Trace[0])
	mc, me := mcCost(measured.Trace[0])
	if fe || me || fc != mc || mc == 0 || mc > celenv.MatchConditionsBudget/10 {
		t.Errorf("match condition costs = %d (estimated %v) untracked first, %d (estimated %v) measured; want equal measured costs far below the budget", fc, fe, mc, me)
	}
}

// TestUntrackedVariablesRetry is TestUntrackedRetry for variables: a
// tracked validation reads fifty variables whose estimated charges exceed
// the budget while their measured costs are small, so the evaluation must
// be redone tracked instead of failing on the estimates.
func TestUntrackedVariablesRetry(t *testing.T) {
	var body, reads strings.Builder
	body.WriteString("  variables:\n")
	for i := range 50 { // 50 × 206,000 > 10,000,000
		fmt.Fprintf(&body, "  - name: v%d\n    expression: \"object.metadata.annotations.note != '' && !object.metadata.name.matches('%s')\"\n", i, heavyRegex)
		fmt.Fprintf(&reads, " && variables.v%d", i)
	}
	// Cubic in the annotations' size: never untracked at this size.
	fmt.Fprintf(&body, "  validations:\n  - expression: \"object.metadata.annotations.all(a, object.metadata.annotations.all(b, object.metadata.annotations.all(c, true)))%s\"\n", reads.String())
	fast, measured := evaluateHeavy(t, body.String(), "web")
	for _, d := range []*policy.Decision{fast, measured} {
		if !d.Allowed {
			t.Errorf("denied: %v; want allowed (the measured costs are far below the budget)", d.Status.Message)
		}
	}
}

// TestCostBoundsLongInputs checks the bounds of functions whose charge
// grows with the length of every element they traverse, on inputs with
// many long strings: a bound that counted one per element, or sized a dyn
// list's elements as empty, would be below the measured cost.
func TestCostBoundsLongInputs(t *testing.T) {
	var finalizers []string
	for i := range 60 {
		finalizers = append(finalizers, fmt.Sprintf("%02d%s", i, strings.Repeat("x", 58)))
	}
	long := strings.Repeat("ab,", 20)
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "long", Namespace: "default", Finalizers: finalizers,
			Labels: map[string]string{"a": long, "b": long}},
		Data: map[string]string{"csv": long, "other": strings.Repeat("y", 60)},
	}
	exprs := []string{
		"object.metadata.finalizers.isSorted()",
		"object.metadata.finalizers.indexOf('zz') < 0",
		"object.metadata.finalizers.lastIndexOf('zz') < 0",
		"object.metadata.finalizers.max() != 'a'",
		"object.metadata.finalizers.min() != 'a'",
		"object.metadata.finalizers.join(',') != 'a'",
		"object.metadata.finalizers.join() != 'a'",
		"object.metadata.finalizers.map(f, f + f).join('--') != 'a'",
		"object.metadata.finalizers.sort()[0] != 'a'",
		"object.metadata.finalizers.distinct().size() > 0",
		"object.data.csv.split(',').join(object.data.other) != ''",
		"object.data.csv.split(',').isSorted() || true",
		"object.data.csv.indexOf('zz') < 0",
		"object.data.csv.replace(',', object.data.other).size() > 0",
		"object.data.csv.findAll('[a-z]+').size() > 0",
		"object.metadata.labels.all(k, object.metadata.labels[k].split(',').size() > 1)",
		"[object.metadata.finalizers, object.metadata.finalizers].map(l, l.join(',')).join(',') != ''",
		"sets.contains(object.metadata.finalizers, object.metadata.finalizers)",
		"!object.metadata.finalizers.exists(f, f.lowerAscii().upperAscii().startsWith(object.data.other))",
		"'%s'.format([object.metadata.finalizers]) != ''",
		"'%s %s'.format([object.metadata.labels, object.data]) != ''",
		"object.metadata.finalizers != object.metadata.labels.a.split(',')",
		"object.metadata.finalizers + object.metadata.finalizers != []",
		"object.metadata.finalizers.slice(0, 2).size() == 2",
		"[object.metadata.finalizers, object.metadata.finalizers].flatten().size() > 0",
		"object.metadata.finalizers.reverse().size() > 0",
		"strings.quote(object.data.csv) != ''",
		"object.data.csv.lastIndexOf(',') > 0",
		"object.metadata.finalizers.all(f, f in object.metadata.finalizers)",
		"object.metadata.finalizers.exists_one(f, f == object.data.other) || true",
		"object.metadata.finalizers.map(f, f.size()).sum() > 0",
		"object.metadata.finalizers.sortBy(f, f + f).size() > 0",
		"object.metadata.labels.transformMap(k, v, v + v).size() > 0",
		"object.metadata.labels.transformList(k, v, k + v).join(',') != ''",
		"object.metadata.finalizers.map(f, [f, f]).flatten().join(',') != ''",
		"object.metadata.finalizers.map(f, f.split('x')).flatten().size() > 0",
		"object.metadata.finalizers.map(f, {f: f}).size() > 0",
		"!sets.intersects(object.metadata.finalizers, object.metadata.labels.a.split(','))",
		"sets.equivalent(object.metadata.finalizers, object.metadata.finalizers)",
	}
	disable := costcheck.Enable()
	defer disable()
	costcheck.Take()
	before := costcheck.Checked()
	for _, expr := range exprs {
		d := evaluateConfigMapCreate(t, fmt.Sprintf("  validations:\n  - expression: %q\n", expr), cm, policy.Options{})
		if !d.Allowed {
			t.Errorf("%s: denied: %v", expr, d.Status.Message)
		}
		for _, v := range costcheck.Take() {
			t.Errorf("%s: %v", expr, v)
		}
	}
	// Most of them are bounded, and each bound was checked.
	if n := costcheck.Checked() - before; n < int64(len(exprs)/2) {
		t.Errorf("only %d of %d expressions had a bound to check", n, len(exprs))
	}
}
