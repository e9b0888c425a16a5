package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

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
