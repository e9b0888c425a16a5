package policy

import (
	"github.com/vapkit/vapkit/audit"
	"github.com/vapkit/vapkit/celenv"
)

// recordedFailures returns the validation failures the API server of
// version v records under [audit.ValidationFailureKey]. Up to 1.36 each
// failing validation of an Audit binding added its own one-element
// annotation under that key, and the audit context refuses to overwrite a
// key with another value, so only the first failure of a request was kept
// (k8s.io/apiserver v0.36.6 validating/dispatcher.go,
// publishValidationFailureAnnotation); 1.37 collects them all into one
// array (v0.37.2 publishValidationFailureAnnotations).
func recordedFailures(v celenv.Version, failures []audit.ValidationFailure) []audit.ValidationFailure {
	if v < celenv.Version1_37 && len(failures) > 1 {
		return failures[:1]
	}
	return failures
}
