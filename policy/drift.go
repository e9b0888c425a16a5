package policy

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// namespaceErrorAt returns the error the API server of version v reports
// when the request's namespace cannot be found. Up to 1.31 the plugin read
// namespaces from its informer's lister only, whose NotFound names the
// resource in the singular (`namespace "x" not found`); from 1.32 a miss is
// confirmed by a GET from storage, which says `namespaces "x" not found`
// (k8s.io/apiserver pkg/admission/plugin/webhook/predicates/namespace
// matcher.go GetNamespace, v0.31.14 vs v0.32.13). Other errors pass
// through.
func namespaceErrorAt(v celenv.Version, name string, err error) error {
	if v < celenv.Version1_32 && apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "namespace"}, name)
	}
	return err
}
