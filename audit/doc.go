// Package audit renders the audit annotations that ValidatingAdmissionPolicies
// add to an admission request, exactly as the Kubernetes API server does.
//
// There are two kinds:
//
//   - "<policy name>/<key>" annotations, from spec.auditAnnotations. A
//     [Collector] gathers the values one policy produces across its bindings
//     and parameters, trims, cuts and de-duplicates them, and renders them
//     with [Collector.Annotations].
//   - The [ValidationFailureKey] annotation, a JSON list of the validations
//     that failed in bindings with the Audit validation action, rendered by
//     [EncodeValidationFailures] for the whole request.
//
// The package contains no CEL: the caller evaluates the expressions and
// passes their results in.
//
//	c := audit.NewCollector("replica-audit")
//	c.Add("replicas", " 4 replicas ") // trimmed: "4 replicas"
//	c.Add("limit", "limit-a")         // from the first param
//	c.Add("limit", "limit-b")         // from the second
//	c.Add("limit", "limit-a")         // duplicate, ignored
//	for _, a := range c.Annotations() {
//		// replica-audit/replicas = "4 replicas"
//		// replica-audit/limit    = "limit-a, limit-b"
//	}
//
// # Order
//
// Values and keys are rendered in the order they were added. The API server
// visits bindings and selected parameters in an unspecified order, so joined
// values and the entries of the validation failure list can come out in any
// order there; a caller that visits them in a fixed order gets a fixed
// result here.
//
// # Compatibility
//
// The behaviour follows auditAnnotationCollector,
// publishValidationFailureAnnotations and ValidationFailureValue in
// k8s.io/apiserver v0.37.2 (pkg/admission/plugin/policy/validating), together
// with the trimming of valueExpression results in validator.go and the key
// check of pkg/admission/attributes.go. The caller is responsible for the
// rest of the API server's rules: annotations are published whether or not
// the request is denied, the validation failure annotation only when there
// is at least one failure, and a key that is already set to a different
// value is not overwritten.
//
// # Concurrency
//
// A [Collector] belongs to one request and must not be shared between
// goroutines; the functions of the package are safe for concurrent use.
//
// # Errors
//
// Nothing here fails: annotations with keys the API server would refuse are
// left out, as the server leaves them out, and values are cut rather than
// rejected.
package audit
