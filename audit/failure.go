package audit

import (
	"encoding/json"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// ValidationFailureKey is the audit annotation key under which the failed
// validations of bindings with the Audit validation action are recorded.
const ValidationFailureKey = "validation.policy.admission.k8s.io/validation_failure"

// MaxValidationFailures is the maximum number of entries in the
// [ValidationFailureKey] annotation; the API server keeps the first ones and
// drops the rest.
const MaxValidationFailures = 50

// ValidationFailure is one failed validation of a binding whose
// validationActions include Audit. Its JSON form, field names and order
// included, is the API server's (ValidationFailureValue in k8s.io/apiserver
// validating/dispatcher.go), e.g.
//
//	{"message":"m","policy":"p","binding":"b","expressionIndex":1,"validationActions":["Audit"]}
type ValidationFailure struct {
	// Message is the failure message, as it would appear in a denial.
	Message string `json:"message"`
	// Policy is the binding's spec.policyName.
	Policy string `json:"policy"`
	// Binding is the binding's name.
	Binding string `json:"binding"`
	// ExpressionIndex is the index of the failed validation in
	// spec.validations (0 for failures that are not tied to one validation).
	ExpressionIndex int `json:"expressionIndex"`
	// ValidationActions are the binding's spec.validationActions, in their
	// listed order.
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

// EncodeValidationFailures renders failures as the value of the
// [ValidationFailureKey] annotation: a compact JSON array with at most
// [MaxValidationFailures] entries (the first ones are kept), encoded by
// encoding/json as the API server does, so '<', '>' and '&' are escaped as
// \u003c, \u003e and \u0026 and invalid UTF-8 becomes U+FFFD. It returns
// false, and no value, when failures is empty: the API server then adds no
// annotation.
func EncodeValidationFailures(failures []ValidationFailure) (string, bool) {
	if len(failures) == 0 {
		return "", false
	}
	if len(failures) > MaxValidationFailures {
		failures = failures[:MaxValidationFailures]
	}
	b, err := json.Marshal(failures)
	if err != nil {
		// Strings, ints and string slices always encode; keep the contract
		// total anyway.
		return "", false
	}
	return string(b), true
}
