// Package upstream runs the real ValidatingAdmissionPolicy admission plugin of
// k8s.io/apiserver v0.36.6 in-process on a conformance case and returns the
// AdmissionResponse a client of the API server would receive.
//
// It is the main conformance module's package upstream (written for
// v0.37.2) with one change for v0.36: authorizers have no conditions-aware
// interface. Keep it in step with that package.
//
// A case (see ParseCase) describes a cluster state — policies, bindings,
// namespaces, parameter objects, CustomResourceDefinitions and authorizer
// rules — and one AdmissionReview request. Run wires the upstream plugin
// (k8s.io/apiserver/pkg/admission/plugin/policy/validating) exactly as the
// API server does, but with fake clientsets instead of a storage backend:
//
//   - policies, bindings, namespaces and built-in parameter kinds live in a
//     k8s.io/client-go/kubernetes/fake clientset and reach the plugin through
//     a shared informer factory; custom parameter kinds live in a dynamic fake
//     client under every served version of their CRD;
//   - a REST mapper knows the built-in kinds of the client-go scheme and the
//     case's CRDs, and an equivalent-resource registry treats all served
//     versions of a CRD as equivalent;
//   - the case's authorizer rules are served by RulesAuthorizer;
//   - the plugin is wrapped by admission.WithAudit and called inside the
//     server's warning-recorder filter, so warnings are de-duplicated, those
//     that cannot be sent as a header (control characters) are dropped, and
//     audit annotations are read back from the request's audit context;
//   - the plugin's error becomes a metav1.Status by the server's own
//     responsewriters.ErrorToAPIStatus.
//
// # Orderings
//
// Upstream visits policies (Go map order), the bindings of one policy and the
// parameters listed by a selector (informer store order) in an unspecified
// order, which changes messages, warning order and joined audit annotation
// values when several of them fail. This package makes every one of those
// orders explicit: after the plugin's real policy source has compiled the
// policies, the plugin's source is replaced by a thin wrapper that returns
// the real hooks (compiled evaluators, parameter informers and all) sorted by
// an Ordering, with their bindings sorted and their parameter listers
// sorting what they list. Nothing else about the plugin is changed. Outcomes
// therefore enumerates every relevant ordering exhaustively when there are at
// most max of them and otherwise samples max of them with a fixed seed; the
// document order is always the first ordering tried.
//
// The source replacement reaches one unexported field of the generic plugin
// through reflection; it is tied to k8s.io/apiserver v0.36.6 and fails with
// an error, not a panic, if that field changes.
//
// # Known limits
//
// Built-in kinds are converted between versions by the client-go scheme,
// which has no conversions between versions of a built-in group; a case
// whose policy matches a built-in request only through another version of
// the same resource (matchPolicy Equivalent) cannot be reproduced, and only
// CRD versions are registered as equivalent resources.
package upstream
