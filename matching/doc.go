// Package matching decides whether a ValidatingAdmissionPolicy or a
// ValidatingAdmissionPolicyBinding applies to an admission request, and as
// which resource and kind the request is seen by the policy.
//
// A caller describes the request with [Attributes] and calls [MatchPolicy]
// for the policy's spec.matchConstraints, then [MatchBinding] for each of its
// bindings. [Match] is the underlying algorithm for one
// MatchResources value. For example, a policy whose resourceRules name
// apps/v1 deployments with matchPolicy Equivalent matches a request for
// extensions/v1beta1 deployments when [Options.Resources] says the two share
// storage; [Result] then reports apps/v1 deployments and the kind the mapper
// gives for it, and the caller converts the object to that kind.
//
// [Exempt] reports the resources for which the API server never evaluates
// API-created policies, and [Index] narrows thousands of policies down to the
// few whose rules could match a request.
//
// # Compiled matching
//
// An evaluator that matches many requests compiles its policies and
// bindings once into a [MatcherSet]: every label selector is converted and
// validated when the set is built, never per request, and equal selectors
// are shared. A [Scratch] carries one request: each distinct selector is
// decided at most once and the namespace is looked up at most once, however
// many policies and bindings use them. [Matcher.Match] answers exactly as
// [MatchPolicy], [MatchBinding] or [Match]. A [LabelIndex] then rules out
// the policies that cannot apply because of the namespace's or the
// object's labels (one binding per tenant, each with a namespaceSelector,
// is the common multi-tenant layout) by counting the label requirements the
// request satisfies, without visiting the policies; it keeps every policy
// whose matching could report an error, so errors surface as the API server
// reports them.
//
// # Compatibility
//
// The behaviour is that of k8s.io/apiserver v0.37.2:
// pkg/admission/plugin/policy/matching (Matcher.Matches),
// pkg/admission/plugin/policy/generic (DefinitionMatches, BindingMatches and
// the exempt admission resources) and
// pkg/admission/plugin/webhook/predicates/{rules,namespace,object}. Error
// texts are the API server's, byte for byte. In particular:
//
//   - Selector errors (a label selector that does not parse, a namespace
//     lookup failure) are reported only for requests the rules match; a
//     request that the rules do not select yields no match and no error.
//   - A namespace that does not exist is reported as the 404 StatusError
//     returned by the [NamespaceGetter] (namespaces "x" not found); other
//     selector problems are wrapped with apierrors.NewInternalError.
//   - A nil matchPolicy behaves as Exact; the API server defaults it to
//     Equivalent before a policy is stored, and callers holding undefaulted
//     objects should apply that default themselves.
//   - The API server leaves the order of label requirements built from
//     matchLabels to Go map iteration; this package sorts matchLabels keys,
//     so when several of them are invalid the reported one is deterministic.
//
// The one intentional difference in evaluation order is invisible in
// results: resource rules are checked before the selectors, so no namespace
// lookup happens for a request the rules do not select.
//
// # Errors
//
// Match functions return an error only where the API server reports one
// (bad selectors, missing namespaces, unknown equivalent kinds, nil match
// constraints); callers turn it into a configuration error under the
// policy's failurePolicy, as the API server does. Nil arguments give an
// error, never a panic.
//
// # Concurrency
//
// All functions are safe for concurrent use provided the [NamespaceGetter]
// and the runtime.EquivalentResourceMapper are. Nothing passed in is
// modified. An [Index] is immutable after [NewIndex]; a [MatcherSet] and its
// [Matcher] and [LabelIndex] values are immutable once built. A [Scratch]
// belongs to one request at a time.
package matching
