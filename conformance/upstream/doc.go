// Package upstream runs the real ValidatingAdmissionPolicy admission plugin of
// k8s.io/apiserver v0.37.2 (or, in the harness of package versions, of an
// older k8s.io/apiserver, v0.30.14 to v0.36.6) in-process on a conformance
// case and returns the AdmissionResponse a client of the API server would
// receive.
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
// # Variables shared by all policies (1.30 to 1.35)
//
// Up to 1.35 the plugin types the variables of every policy with one object
// type per process: NewCompositedCompilerFromTemplate
// (pkg/admission/plugin/cel/composition.go, lines 60-73 in v0.30.14) hands
// every policy's compiler the template's MapType itself, and AddField
// (composition.go:103-105) writes each compiled variable's type into it, so
// a policy compiled later sees the variables of every policy compiled
// before it, typed as they were last declared. The policy source compiles
// bound policies in Go map order (generic/policy_source.go:283,
// calculatePolicyData), so the type a server ends with depends on a random
// order, and on every policy it ever compiled. Running many cases in one
// process made that visible as cases whose own variables were typed by
// another case's ("found no matching overload for 'size' applied to
// 'bool.()'" for a string variable), in different cases from run to run.
//
// Each Cluster here is a fresh server instead: compiles are serialised
// across the process, the shared type holds only the fields of policies the
// Cluster compiled, and the Cluster compiles all bound policies in an order
// it is given. Policies the API server accepts only read variables they
// declare before the read (creation compiles each policy alone), and then
// the order cannot matter; for a case whose policies read variables other
// policies declare, Outcomes runs one Cluster per order of the policies
// involved and returns every outcome. From 1.36 every policy has a
// variables type of its own, and none of this happens.
//
// The source replacement and the compile hook reach unexported fields of
// the generic plugin and its policy source through reflection, and the
// variables templates through go:linkname; they are tied to these versions
// and fail with an error, not a panic, if a field changes.
//
// # Older versions
//
// The harness of package versions runs this package's source at 1.30 to
// 1.36, in a module of its own per version (an old k8s.io/apiserver needs
// an older cel-go than vapkit's, so that module cannot require vapkit).
// Files with no build constraint are shared by every version; the rest are
// selected by the build tags vapkit_harness (an older version) and
// vapkit_k8s_1_NN (which one), and the files without vapkit_harness in
// their constraint are built here, at 1.37:
//   - plugin_*.go: how the plugin is created and initialized (the 1.35 and
//     later initializers take an effective version, the 1.36 and later
//     constructors can fail);
//   - audit_*.go: how the audit context is set up (its fields up to 1.33,
//     Init from 1.34);
//   - vartypes_*.go: where the process-wide variables type lives, if it
//     exists (variables.go isolates it);
//   - authorizer.go (1.37) serves vapkit's casefile.RuleAuthorizer, with
//     the conditions-aware interface 1.37 adds; authorizer_harness.go
//     (older versions) decodes and matches the same rules itself, as the
//     harness cannot import vapkit;
//   - bench_support.go and source.go (Source, which package versions
//     copies from) are 1.37's only.
//
// # Known limits
//
// Built-in kinds are converted between versions by the client-go scheme,
// which has no conversions between versions of a built-in group; a case
// whose policy matches a built-in request only through another version of
// the same resource (matchPolicy Equivalent) cannot be reproduced, and only
// CRD versions are registered as equivalent resources.
package upstream
