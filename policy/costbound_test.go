package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

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
	if fe || me || fc != mc || mc == 0 || mc > matchConditionsBudget/10 {
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
