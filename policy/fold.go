// Folding one evaluation's results, and configuration errors, into the
// request's decision.

package policy

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/audit"
)

type deniedDecision struct {
	policy, binding string // binding empty for policy-level errors
	message         string
	reason          metav1.StatusReason
}

// configError records a policy- or binding-level error under the policy's
// failurePolicy, ignoring validationActions, as the API server does.
func (st *requestState) configError(cp *compiledPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, err error) {
	tr := PolicyTrace{Policy: cp.policy.Name, Outcome: Errored, Err: err}
	dd := deniedDecision{policy: cp.policy.Name}
	if b != nil {
		tr.Binding = b.Name
		tr.Actions = b.Spec.ValidationActions
		dd.binding = b.Name
		dd.message = "failed to configure binding: " + err.Error()
	} else {
		dd.message = "failed to configure policy: " + err.Error()
	}
	switch cp.failurePolicy {
	case admissionregistrationv1.Ignore:
		tr.Err = fmt.Errorf("ignored under failurePolicy Ignore: %w", err)
	case admissionregistrationv1.Fail:
		st.denied = append(st.denied, dd)
	default:
		dd.message = fmt.Sprintf("unrecognized failure policy: '%v'", cp.failurePolicy)
		st.denied = append(st.denied, dd)
	}
	st.trace = append(st.trace, tr)
}

// fold applies one evaluation's results to the request, as the dispatcher
// does: decisions through the binding's validationActions, audit annotation
// errors as denials regardless of them.
func (st *requestState) fold(cp *compiledPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, r validateResult, collector *audit.Collector, tr *PolicyTrace) {
	for i, d := range r.decisions {
		if !d.deny {
			continue
		}
		for _, action := range b.Spec.ValidationActions {
			switch action {
			case admissionregistrationv1.Deny:
				st.denied = append(st.denied, deniedDecision{policy: cp.policy.Name, binding: b.Name, message: d.message, reason: d.reason})
			case admissionregistrationv1.Audit:
				st.failures = append(st.failures, audit.ValidationFailure{
					Message: d.message, Policy: b.Spec.PolicyName, Binding: b.Name,
					ExpressionIndex: i, ValidationActions: b.Spec.ValidationActions,
				})
			case admissionregistrationv1.Warn:
				st.warnings.add(fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", cp.policy.Name, b.Name, d.message))
			}
		}
	}
	for _, a := range r.audits {
		switch {
		case a.err != "":
			st.denied = append(st.denied, deniedDecision{policy: cp.policy.Name, binding: b.Name, message: a.err})
			tr.Outcome = Errored
		case a.publish:
			collector.Add(a.key, a.value)
		}
	}
}
