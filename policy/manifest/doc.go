// Package manifest reads Kubernetes manifests (multi-document YAML or JSON)
// into typed objects: the policies, bindings, namespaces, parameter
// resources, CRDs and AdmissionReviews that vapkit's evaluator, type
// checker, tests and command-line tools consume. It does not import the
// evaluator, so a program that only reads or checks manifests need not link
// it.
//
// [Load] and [LoadFiles] return a [Set] grouping the objects by what they
// are for, which is what [github.com/vapkit/vapkit/policy.NewTester] and
// [github.com/vapkit/vapkit/typecheck] take:
//
//	m, err := manifest.LoadFiles("policies.yaml", "params.yaml")
//	for _, p := range m.Policies {
//		// *admissionregistrationv1.ValidatingAdmissionPolicy, defaulted
//	}
//
// [Decode] takes the text of a file such as a conformance case, skips
// documents that hold only comments, and returns one [Document] per object
// with its 1-based document number and the line where it starts:
//
//	docs, err := manifest.DecodeFile("cases/params-configmap.yaml")
//	for _, d := range docs {
//		switch o := d.Object.(type) {
//		case *admissionregistrationv1.ValidatingAdmissionPolicy:
//			// already defaulted: o.Spec.FailurePolicy is never nil
//		case *unstructured.Unstructured:
//			// a param, CRD, or any other kind
//		}
//	}
//
// # Input
//
// YAML documents are separated by lines starting with "---"; "#" comments
// are allowed anywhere. YAML is converted to JSON with sigs.k8s.io/yaml, so
// integers stay integers and YAML 1.1 rules apply (an unquoted yes is a
// boolean). Input whose first significant character is "{" or "[" is read
// as a stream of concatenated JSON values when it parses as JSON and has no
// "---" line (JSON documents separated by "---" are read as YAML). Documents
// holding only comments, whitespace or a YAML null are skipped but keep their
// number. A v1 List
// document (in either syntax) yields one Document per item; the items share
// the List's document number and have their own Item and Line.
//
// # Object types
//
//   - admissionregistration.k8s.io v1, v1beta1 and v1alpha1
//     ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding become
//     *admissionregistrationv1.ValidatingAdmissionPolicy and
//     *admissionregistrationv1.ValidatingAdmissionPolicyBinding, converted
//     field by field as the API server converts them and defaulted with
//     [SetPolicyDefaults] and [SetBindingDefaults]. A v1alpha1 binding's
//     paramRef.parameterNotFoundAction defaults to Deny first, as the v1alpha1
//     API does; v1beta1 and v1 have no such default.
//   - v1 Namespace becomes *corev1.Namespace.
//   - admission.k8s.io/v1 AdmissionReview becomes *admissionv1.AdmissionReview;
//     request.object, request.oldObject and request.options are kept as
//     compact JSON in runtime.RawExtension.Raw.
//   - An admissionregistration.k8s.io object of a version and kind that
//     k8s.io/api does not define (admissionregistration.k8s.io/v2, a
//     misspelt kind) is an error, not a parameter object: the API server
//     would serve no such kind.
//   - Anything else (ConfigMaps, custom-kind params, CustomResourceDefinitions,
//     vapkit.dev/v1alpha1 AuthorizerRules, ...) becomes
//     *unstructured.Unstructured with int64 integers.
//
// # Errors
//
// Typed kinds are decoded strictly, as the API server does with strict field
// validation: an unknown field, a duplicate field or a value of the wrong
// JSON type is an error naming the field path (spec.validations[0].expression:
// expected string, got number). For unstructured objects only duplicate keys
// and a malformed metadata are errors, unless [Options.Strict] asks
// [DecodeWith] to check objects of kinds k8s.io/api defines against their Go
// types too, including the objects of an AdmissionReview's request. Every object needs apiVersion and
// kind. Each error is an [*Error] rendered as
// "file:line: document N (kind/name): problem", where line is the line of
// the offending field when it can be found. Decode reports up to ten broken
// documents at once and returns no documents when any is broken.
//
// Decode never panics: invalid UTF-8, deeply nested values (go-yaml and
// encoding/json stop at 10,000 levels) and alias bombs are reported as
// errors. Memory use is a small multiple of the input size. Decode keeps no
// state between calls and is safe for concurrent use.
package manifest
