package policy

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Decision is the answer to one admission request.
type Decision struct {
	// Allowed reports whether the request is admitted.
	Allowed bool
	// Status is what a denied client receives (code, reason, message and
	// details, as the API server builds them); nil when allowed.
	Status *metav1.Status
	// Warnings are the warnings the client receives, in order: the API
	// server's recorder drops empty ones and those with control characters
	// and sends each distinct text once.
	Warnings []string
	// AuditAnnotations are the annotations added to the audit event:
	// "<policy>/<key>" and the validation failure record.
	AuditAnnotations map[string]string
	// Trace tells what happened for each policy, binding and param, in
	// evaluation order.
	Trace []PolicyTrace
	// Object is the request's object as the MutatingAdmissionPolicies
	// (Options.MutatingPolicies) left it, in the request's kind and form
	// (typed or unstructured), and the object the validating policies
	// saw; nil when no mutation changed it.
	Object runtime.Object
	// Patch is the RFC 6902 JSON patch that turns the request's object
	// into Object, as a mutating webhook would answer; nil when no
	// mutation changed it. The API server itself returns no patch: it
	// mutates the object in place.
	Patch []byte
	// Mutations trace the mutating policies, in evaluation order: one
	// entry per (policy, binding, param) invocation and per configuration
	// error, then those of the reinvocation pass (Reinvoked set). Each
	// mutation's expression entry has the Value "changed" or "unchanged".
	// Variables are traced as in Trace, except that each mutation
	// evaluates the variables it reads afresh, on the object as the
	// earlier mutations left it, so they are listed after every mutation
	// that read them.
	Mutations []PolicyTrace
}

// Outcome classifies a trace entry.
type Outcome string

// Outcomes of policies and expressions.
const (
	// NotMatched: the policy or binding does not apply, or a match
	// condition was false.
	NotMatched Outcome = "NotMatched"
	// Passed: every validation admitted the request.
	Passed Outcome = "Passed"
	// Failed: a validation evaluated to false.
	Failed Outcome = "Failed"
	// Errored: an error happened; failurePolicy decided what it means.
	Errored Outcome = "Errored"
	// Skipped: evaluation was not attempted, e.g. a policy without bindings.
	Skipped Outcome = "Skipped"
)

// PolicyTrace records one (policy, binding, param) evaluation, or a policy or
// binding that was considered and not evaluated.
type PolicyTrace struct {
	// Policy and Binding name the pair; Binding is empty for policy-level
	// entries (no match, configuration error).
	Policy, Binding string
	// Param names the param object; nil when the policy was evaluated
	// without one.
	Param *types.NamespacedName
	// Outcome summarises the entry.
	Outcome Outcome
	// Actions are the binding's validationActions.
	Actions []admissionregistrationv1.ValidationAction
	// Expressions are the evaluated expressions, in evaluation order. A
	// variable (spec.variables[i].expression) is listed once, after the
	// expressions of the step that first read it (match conditions;
	// validations and their messages; audit annotations); variables no
	// expression read were not evaluated and are absent.
	Expressions []ExprTrace
	// Err explains configuration, matching and parameter errors, and errors
	// ignored under failurePolicy Ignore.
	Err error
	// Cost is the total cost the evaluation charged.
	Cost int64
	// CostEstimated reports that some expressions ran untracked, so Cost
	// includes their estimated upper bounds (see Options.MeasureCost).
	CostEstimated bool
	// Reinvoked marks the entries of a mutating policy's reinvocation
	// pass.
	Reinvoked bool
}

// ExprTrace records one evaluated expression.
type ExprTrace struct {
	// Path locates the expression, e.g. spec.validations[0].expression.
	Path *field.Path
	// Outcome is Passed, Failed or Errored for validations and match
	// conditions, and for variables (Failed when false); Passed for other
	// expressions that produced a value;
	// Skipped for the message expression of a validation that passed,
	// which is charged its estimated cost instead of being evaluated when
	// that keeps the limits out of reach (its message is never shown).
	Outcome Outcome
	// Value is the result rendered as text ("true", a message, a value).
	// For a variable it is "true", "false", the string, or for values of
	// other types the type's name ("int", "list"): rendering every list
	// or map would cost every request that reads one.
	Value string
	// Err is the evaluation error text, if any.
	Err string
	// Cost is the cost charged for the expression, including variables it
	// evaluated first; 0 for variables, charged to the expressions that
	// read them.
	Cost int64
	// CostEstimated reports that the expression ran untracked and Cost is
	// its estimated upper bound for the request's input sizes (see
	// Options.MeasureCost).
	CostEstimated bool
}

// String renders the trace entry on one line. The format is for people and
// may change; do not parse it.
func (t PolicyTrace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policy=%s", t.Policy)
	if t.Binding != "" {
		fmt.Fprintf(&b, " binding=%s", t.Binding)
	}
	if t.Param != nil {
		fmt.Fprintf(&b, " param=%s", t.Param)
	}
	costOp := "="
	if t.CostEstimated {
		costOp = "<="
	}
	fmt.Fprintf(&b, " outcome=%s cost%s%d", t.Outcome, costOp, t.Cost)
	if t.Err != nil {
		fmt.Fprintf(&b, " err=%q", t.Err.Error())
	}
	return b.String()
}

// AdmissionResponse renders d as a webhook response for the request uid,
// with patchType JSONPatch and Patch when mutating policies changed the
// object and the request is allowed.
func (d *Decision) AdmissionResponse(uid types.UID) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: uid, Allowed: d.Allowed, Warnings: d.Warnings}
	if d.Status != nil {
		s := *d.Status
		resp.Result = &s
	}
	if len(d.Patch) > 0 && d.Allowed {
		pt := admissionv1.PatchTypeJSONPatch
		resp.PatchType, resp.Patch = &pt, append([]byte(nil), d.Patch...)
	}
	if len(d.AuditAnnotations) > 0 {
		resp.AuditAnnotations = make(map[string]string, len(d.AuditAnnotations))
		for k, v := range d.AuditAnnotations {
			resp.AuditAnnotations[k] = v
		}
	}
	return resp
}
