package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/vapkit/vapkit/policy"
)

// variablesPolicy returns a policy whose match condition, validation and
// audit annotation read variables: an int, a false bool, an error, and one
// no expression reads.
func variablesPolicy() ([]*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	ps, bs := benchPolicies(1, 1)
	ps[0].Spec.Variables = []admissionregistrationv1.Variable{
		{Name: "replicas", Expression: "object.spec.replicas"},
		{Name: "huge", Expression: "variables.replicas > 100"},
		{Name: "missing", Expression: "object.metadata.annotations['nope']"},
		{Name: "unread", Expression: "'x'"},
	}
	ps[0].Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "some", Expression: "variables.replicas >= 0"}}
	ps[0].Spec.Validations = []admissionregistrationv1.Validation{{Expression: "!variables.huge && variables.replicas > 0"}}
	ps[0].Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "k", ValueExpression: "string(variables.missing)"}}
	return ps, bs
}

// TestTraceVariables: each variable an evaluation read is traced once,
// after the step that first read it, with its value or error; unread ones
// are absent.
func TestTraceVariables(t *testing.T) {
	ps, bs := variablesPolicy()
	ev, err := policy.Compile(ps, bs, policy.Options{Namespaces: benchNamespaces})
	if err != nil {
		t.Fatal(err)
	}
	d, err := ev.Evaluate(t.Context(), benchRequest())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Trace) != 1 {
		t.Fatalf("Evaluate() traced %d entries, want 1: %v", len(d.Trace), d.Trace)
	}
	type entry struct {
		Path    string
		Outcome policy.Outcome
		Value   string
		Errored bool
	}
	var got []entry
	for _, et := range d.Trace[0].Expressions {
		got = append(got, entry{et.Path.String(), et.Outcome, et.Value, et.Err != ""})
	}
	want := []entry{
		{"spec.matchConditions[0].expression", policy.Passed, "true", false},
		{"spec.variables[0].expression", policy.Passed, "int", false},
		{"spec.validations[0].expression", policy.Passed, "true", false},
		{"spec.variables[1].expression", policy.Failed, "false", false},
		{"spec.auditAnnotations[0].valueExpression", policy.Errored, "", true},
		{"spec.variables[2].expression", policy.Errored, "", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trace expressions mismatch (-want +got):\n%s", diff)
	}
}

// BenchmarkEvaluateVariables evaluates the policy of TestTraceVariables,
// tracing its variables.
func BenchmarkEvaluateVariables(b *testing.B) {
	ps, bs := variablesPolicy()
	ev, err := policy.Compile(ps, bs, policy.Options{Namespaces: benchNamespaces})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ev.Evaluate(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// variablesMutatingOptions returns a MAP whose match condition and two
// mutations read variables: the first mutation adds the label the second
// one's variable reads, so the variable's value differs between them.
func variablesMutatingOptions(t testing.TB) policy.Options {
	p, b := mutatingPolicy(t, "vars", "Fail", "Never",
		`apply:Object{metadata: Object.metadata{labels: {"team": variables.team}}}`,
		`apply:Object{metadata: Object.metadata{labels: {"seen": string(variables.labelled)}}}`)
	p.Spec.Variables = []admissionregistrationv1.Variable{
		{Name: "team", Expression: "'a'"},
		{Name: "labelled", Expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"},
		{Name: "app", Expression: "object.metadata.labels['app']"},
		{Name: "unread", Expression: "1"},
	}
	p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "web", Expression: "variables.app == 'web'"}}
	return policy.Options{MutatingPolicies: []*admissionregistrationv1.MutatingAdmissionPolicy{p}, MutatingBindings: []*admissionregistrationv1.MutatingAdmissionPolicyBinding{b}}
}

// TestTraceMutatingVariables: a mutating policy's variables are traced as
// a validating policy's are, after the match conditions that read them
// and after each mutation that read them (each mutation evaluates them
// afresh, on the object as the earlier mutations left it).
func TestTraceMutatingVariables(t *testing.T) {
	ev, err := policy.Compile(nil, nil, variablesMutatingOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ev.Evaluate(t.Context(), typedDeploymentRequest(admissionv1.Create))
	if err != nil {
		t.Fatal(err)
	}
	// The first pass's entry; the reinvocation pass traces the invocation
	// as not reinvoked.
	if len(d.Mutations) != 2 || d.Mutations[0].Reinvoked {
		t.Fatalf("Evaluate() traced mutating entries %v, want the first pass's then the reinvocation's", d.Mutations)
	}
	type entry struct {
		Path    string
		Outcome policy.Outcome
		Value   string
		Costly  bool
	}
	var got []entry
	for _, et := range d.Mutations[0].Expressions {
		got = append(got, entry{et.Path.String(), et.Outcome, et.Value, et.Cost > 0})
	}
	want := []entry{
		{"spec.matchConditions[0].expression", policy.Passed, "true", true},
		{"spec.variables[2].expression", policy.Passed, "web", false},
		{"spec.mutations[0].applyConfiguration.expression", policy.Passed, "changed", true},
		{"spec.variables[0].expression", policy.Passed, "a", false},
		{"spec.mutations[1].applyConfiguration.expression", policy.Passed, "changed", true},
		{"spec.variables[1].expression", policy.Passed, "true", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mutation trace expressions mismatch (-want +got):\n%s", diff)
	}
	if got := d.Object.(*appsv1.Deployment).Labels["seen"]; got != "true" {
		t.Errorf("label seen = %q, want true (the second mutation sees the first's label)", got)
	}
}

// BenchmarkEvaluateMutatingVariables evaluates the policy of
// TestTraceMutatingVariables, tracing its variables.
func BenchmarkEvaluateMutatingVariables(b *testing.B) {
	ev, err := policy.Compile(nil, nil, variablesMutatingOptions(b))
	if err != nil {
		b.Fatal(err)
	}
	req := typedDeploymentRequest(admissionv1.Create)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ev.Evaluate(b.Context(), req); err != nil {
			b.Fatal(err)
		}
	}
}
