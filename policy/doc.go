// Package policy compiles Kubernetes ValidatingAdmissionPolicies and their
// bindings, and optionally MutatingAdmissionPolicies, into an [Evaluator] and answers admission requests with the
// decision the API server of Kubernetes 1.37 would make.
//
// Compile once, evaluate many times:
//
//	ev, err := policy.Compile(policies, bindings, policy.Options{Params: src, Namespaces: nsGetter})
//	...
//	d, err := ev.Evaluate(ctx, &policy.Request{Operation: admissionv1.Create, ...})
//	if !d.Allowed {
//		fmt.Println(d.Status.Message)
//	}
//
// A [Decision] holds what a client would receive (allowed, the
// metav1.Status, warnings), the audit annotations, and a [PolicyTrace] per
// policy, binding and param that says what matched and what each expression
// returned, at what cost.
//
// Expressions whose estimated worst-case cost for the request's input sizes
// keeps every limit out of reach run without cost tracking, two to three
// times faster, and their trace entries report the estimate
// (ExprTrace.CostEstimated); evaluation falls back to tracking whenever a
// limit could be reached, so decisions are the same. [Options].MeasureCost
// tracks every expression.
//
// # Mutating admission policies
//
// With [Options].MutatingPolicies and MutatingBindings, Evaluate first runs
// the MutatingAdmissionPolicies as the API server's admission chain does
// (CREATE, UPDATE and CONNECT; matching, params, match conditions and
// failurePolicy as for validating policies; apply configurations merged with
// server-side-apply semantics over the kind's schema, JSON patches applied
// as json-patch v4 applies them; one reinvocation pass for IfNeeded
// policies), then the validating policies on the mutated object. The
// Decision carries the mutated object (Decision.Object), the JSON patch to
// it (Decision.Patch, sent by [Decision.AdmissionResponse]) and the trace of
// the mutations (Decision.Mutations). Schemas of built-in kinds ship with
// the library; those of custom resources come from [Options].CRDs. The API
// server also defaults the object after each mutation, and so does vapkit:
// a custom resource with its CRD schema's defaults, a built-in object with
// kube-apiserver 1.37's defaulting functions (see "Defaulting after a
// mutation" below).
//
// # Concurrency
//
// An [Evaluator] never changes after Compile returns and is safe for
// concurrent use. Per-request state (converted objects, the namespace
// lookup, the authorizer's decision cache, cost budgets) lives in each
// Evaluate call. Plug-ins in [Options] must be safe for concurrent use.
// Evaluate never modifies the request, the policies, the bindings or the
// objects plug-ins return. To change policies, compile a new Evaluator and
// swap it, for example through an atomic.Pointer[policy.Evaluator].
//
// # Errors
//
// Compile fails only on unusable input (nil entries, duplicate names);
// problems the API server tolerates are listed by [Evaluator.Issues] and
// behave at evaluation time as they do there. Evaluate returns an error only
// when no decision can be made (invalid request, cancelled context); policy
// errors are part of the Decision, governed by failurePolicy.
//
// # Compatibility
//
// Decisions, messages, status codes, warnings, audit annotations and costs
// follow k8s.io/apiserver v0.37.2. Where the API server's order is
// unspecified (policies, bindings, params listed by a selector), vapkit uses
// name order, so the same input always gives the same one of the answers the
// server may give.
//
// # Versions
//
// [celenv.Version] (the Env of [Options]) names the API server's binary
// version, 1.30 to 1.37. Besides which CEL libraries exist (see celenv), the
// behaviour of the plugin and its libraries changed between those versions.
// k8s.io/apiserver v0.30.14, v0.31.14, v0.32.13, v0.33.13, v0.34.13,
// v0.35.10, v0.36.6 and v0.37.2 were diffed in pkg/admission/plugin/policy,
// pkg/admission/plugin/cel and pkg/cel; every change that can alter a
// decision, a message, an annotation or a type-checking warning is listed
// here with the file it is in. Modelled changes are decided as the chosen
// version decides, each with a test:
//
//   - 1.37: validation_failure holds every failure of an Audit binding (at
//     most 50); up to 1.36 only the first failure of a request was kept,
//     because each was added under the same key and the audit context
//     refuses to overwrite one (validating/dispatcher.go,
//     publishValidationFailureAnnotation(s); TestDriftValidationFailures).
//   - 1.32: containsCIDR tests overlap; 1.30 and 1.31 compared the masked
//     receiver with the argument's address at the receiver's length,
//     unmasked, so cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') was false
//     (pkg/cel/library/cidr.go; celenv TestDriftContainsCIDR).
//   - 1.32: resource checks pass fieldSelector and labelSelector to the
//     authorizer; 1.31 accepts them but drops them, its
//     AuthorizeWithSelectors feature gate being alpha and off by default
//     (pkg/cel/library/authz.go, pkg/features/kube_features.go; celenv
//     TestDriftAuthzSelectors).
//   - 1.32: a result of the wrong type is reported as "must evaluate to
//     bool but got int"; 1.30 and 1.31 said only "must evaluate to bool"
//     (pkg/admission/plugin/cel/compile.go; celenv
//     TestDriftResultTypeMessage).
//   - 1.32: a request namespace that does not exist is confirmed by a GET,
//     reported as `namespaces "x" not found`; 1.30 and 1.31 read only the
//     informer's lister, which says `namespace "x" not found`
//     (pkg/admission/plugin/webhook/predicates/namespace/matcher.go,
//     GetNamespace; TestDriftNamespaceNotFound).
//   - 1.36: type checking declares params whenever the policy has a
//     paramKind; up to 1.35 only when the paramKind's schema resolved, so
//     every use of params was an undeclared reference otherwise
//     (validating/typechecking.go; typecheck TestDriftParamsWithoutSchema).
//
// The last two were missed by reading the diffs and found by running each
// version's own plugin beside vapkit (conformance/versions; the
// conformance module's README lists the divergences per version).
//
// Decided as 1.37 decides at every version, each the outcome of one order
// the older servers may pick:
//
//   - 1.36: every policy's variables have an object type of their own
//     (pkg/admission/plugin/cel/composition.go, NewCompositedCompiler). Up
//     to 1.35 one type per server process is shared by every policy:
//     NewCompositedCompilerFromTemplate hands each policy's compiler the
//     template's MapType itself (composition.go:60-73 in v0.30.14) and
//     AddField writes each compiled variable's type into it
//     (composition.go:103-105), while the policy source compiles policies
//     in Go map order (generic/policy_source.go:283). A policy that reads
//     variables.x without declaring x before the read then compiles when a
//     policy declaring x happened to be compiled before it, and fails when
//     evaluated. API validation compiles each policy with a type of its
//     own (NewCompositedCompiler, composition.go:52-58) and refuses such a
//     policy, so in a cluster the shared type changes no decision; for
//     policies that reach vapkit without that validation, vapkit compiles
//     each policy alone, which is the server's outcome when every such
//     reader is compiled before the policies declaring what it reads (two
//     policies reading each other's variables have no such order).
//
// Modelled too, although vapkit uses cel-go v0.29.2, 1.37's, at every
// version: 1.34, 1.35 and 1.36 have lists.range (ext.Lists version 3
// arrives at 1.34, pkg/cel/environment/base.go) and build with cel-go
// v0.26.0, whose genRange (ext/lists.go) builds a list of any size and
// gives [] for a negative size. cel-go's "ext/lists: add max size check to
// genRange() to prevent OOM" (cel-go pull request 1310, issue 1309; in
// v0.29.2, not in v0.26.0) refuses n > 1,000,000 with "lists.range: size n
// exceeds maximum allowed (1000000)" and n < 0 with "lists.range: size
// must be non-negative, got n". At 1.34 to 1.36 vapkit's lists.range is
// v0.26.0's: lists.range(-1) is [], and lists.range(1100000).size() > 0
// (conformance/gen/expr.go) ends in "operation cancelled: actual cost
// limit exceeded" as on those servers, the call being charged n+11 by
// ext.Lists' cost tracker (trackListOutputSize), past the per-expression
// limit of 1,000,000, which cancels the evaluation even under ||. A list
// of more than 1,000,000 elements is not built for that: its size decides
// the charge (celenv TestDriftListsRange; conformance
// versions/testdata/lists-range.yaml).
//
// Modelled as well, found at 1.32 by running its plugin: cel-go v0.22.0,
// the 1.32 server's, declares the second variable of a two-variable
// comprehension with no type when the range is no list or map: a dyn range
// (such as a map read from object), an error, or no collection at all
// (checker/checker.go, checkComprehension); v0.23.2, 1.33's, types it dyn
// or error, as v0.29.2 does. The missing type prints as an empty name and is
// assignable only to dyn and type parameters, so most uses of the variable
// fail to check, and an expression that checks with it (dyn(v), [v],
// v == k) fails when the compiler converts the checked expression to its
// proto form (pkg/admission/plugin/cel/compile.go, cel.AstToCheckedExpr),
// an internal error. Over a dyn map m, the 1.32 server says:
//
//	m.all(k, v, v != '')           found no matching overload for '_!=_' applied to '(, string)'
//	m.all(k, v, v.startsWith('a')) found no matching overload for 'startsWith' applied to '.(string)'
//	m.all(k, v, size(v) > 0)       found no matching overload for 'size' applied to '()'
//	m.all(k, v, v.x == 1)          type '' does not support field selection
//	m.all(k, v, v)                 expected type 'bool' but found ''
//	m.all(k, v, v.all(a, b, b == 1))
//	                               expression of type '' cannot be range of a comprehension (must be
//	                               list, map, or dynamic), then b == 1 fails as v != '' does
//	m.all(k, v, dyn(v) != '')      unexpected compilation error: missing type conversion to proto:
//	m.all(k, v, k != '')           compiles: v is unused
//
// At 1.32 vapkit checks an expression holding a two-variable comprehension
// a second time, each such range wrapped in a call that makes v0.29.2's
// checker, whose handling of an untyped variable is v0.22.0's, declare the
// variable untyped (celenv/twovar132.go), and reports that check's errors,
// or the proto conversion's, when there are any. The type checker
// (status.typeChecking) reports the check's errors only, as upstream's
// does. Two-variable comprehensions arrive with compatibility version
// 1.32, so the 1.32 server refuses them in new expressions anyway; stored
// expressions, evaluation and type checking are affected (celenv and
// typecheck TestDriftTwoVarComprehensions132, recorded from the 1.32
// plugin's compiler and type checker; conformance
// versions/testdata/two-var-comprehensions*.yaml).
//
// Defaulting after a mutation. The mutating policy plugin defaults the
// object after every successful mutation
// (k8s.io/apiserver@v0.37.2 pkg/admission/plugin/policy/mutating/
// dispatcher.go, dispatchOne: the patched object is converted back to its
// typed form and passed to ObjectInterfaces.GetObjectDefaulter().Default
// before it replaces the versioned object), so the next mutation, the
// reinvocation pass, the validating policies and storage all see the
// defaulted object. The request handlers pass their RequestScope as the
// ObjectInterfaces (pkg/endpoints/handlers/create.go, mutatingAdmission.Admit
// with scope; update.go and patch.go alike), whose Defaulter
// (pkg/endpoints/installer.go, a.group.Defaulter) is, in kube-apiserver,
// the scheme holding the defaulting functions of k8s.io/kubernetes
// pkg/apis/*/* and, for custom resources, the CRD handler's
// unstructuredDefaulter, which applies the structural schema's defaults
// (k8s.io/apiextensions-apiserver@v0.37.2
// pkg/apiserver/customresource_handler.go, unstructuredDefaulter.Default).
// vapkit does both after each mutation: CRD schema defaults as that
// defaulter applies them (internal/mutation, TypeConverter.Default;
// compared with apiextensions-apiserver's structural defaulting on 2,000
// generated objects in conformance/defaultdiff), and for built-in kinds
// kube-apiserver 1.37's defaulting functions, written for vapkit in
// internal/builtin/defaulting from k8s.io/kubernetes v1.37.2's defaults.go
// files and the +default markers of k8s.io/api, with feature gates at their
// 1.37 defaults. They are compared with kube's own functions kind by kind
// (conformance/kubedefaults: every kind of every group version kube
// defaults, on generated and hand-written objects) and end to end
// (conformance/mapdiff, whose upstream side defaults with kube's functions).
// So a container a mutation adds gets its imagePullPolicy,
// terminationMessagePath and terminationMessagePolicy, a new port its
// protocol, in the next mutations, the validating policies,
// Decision.Object and Decision.Patch. The defaults are 1.37's at every
// value of the version knob, which selects the CEL environment only: older
// servers' defaulting functions differ in a few feature-gated fields, which
// is not modelled. The request's own object is taken as given by
// [Evaluator.Evaluate] (the API server defaulted it when decoding;
// [NewRequest] and [Evaluator.Request] default the built-in objects they
// are given): an object written without its defaults gets them after the
// first mutation that runs, and Decision.Patch carries them, as the
// server's patch for such an object would.
//
// Not modelled: what the API server's registry does between mutating and
// validating admission. The store prepares and validates the object
// before it calls validating admission (k8s.io/apiserver@v0.37.2
// pkg/registry/generic/registry/store.go, Create: rest.BeforeCreate, then
// the validating admission function), so on a server the validating
// policies, though not the mutating ones, see metadata.uid and
// generation, a Job's generated selector, a Service's allocated clusterIP
// and ipFamilies, a Pod's status.phase and qosClass, and an object the
// kind's API validation refuses never reaches them (422). vapkit hands
// the validating policies the object as mutating admission left it.
// conformance/cmd/serverdiff shows these cases against a kube-apiserver.
//
// Changes that cannot alter what vapkit computes, and why:
//
//   - 1.37: a param missing from the informer cache is fetched directly
//     (generic/policy_dispatcher.go, getParamDirectly). It only closes a
//     window of informer lag; vapkit reads params from the Source it is
//     given, which is authoritative.
//   - 1.37: conversion of the object is shared per matched kind
//     (validating/dispatcher.go, versionedAttrs); the converted object is
//     the same.
//   - 1.35: a nil namespaceSelector or objectSelector is an error ("a nil
//     namespace selector was passed, ...", generic/policy_matcher.go); up to
//     1.34 it matched nothing. The API server defaults both selectors before
//     storing, and [Compile] applies the same defaults, so a nil selector
//     never reaches matching.
//   - 1.36: a policy whose composition environment cannot be built is a
//     single EvalError decision (validating/validator.go, compileError);
//     the environment is fixed and always builds.
//   - 1.32 and 1.34: runtime and estimated costs (pkg/cel/library/cost.go):
//     1.32 charges equality of Kubernetes values a flat 1, as cel-go's
//     default already did for them, and adds estimator cases for functions
//     that arrived later; 1.34 changes estimates of the ip/cidr member
//     functions only. Estimates never decide admission (vapkit uses them
//     only to skip cost tracking where the limits are out of reach).
//   - 1.31: messageExpression errors are classified by wrapped sentinel
//     errors instead of by type and message prefix
//     (validating/validator.go); the same errors end in the same branch.
//   - 1.32 and 1.33: library and type renames (net.cidr to
//     kubernetes.net.cidr, k8s.authz to kubernetes.authz, ...), semver costs
//     arriving with the semver library, StrictCost environments folded into
//     one (1.35): not observable in decisions.
//   - Metrics, static manifests (1.36, policy/manifest) and the mutating
//     plugin are outside ValidatingAdmissionPolicy decisions.
package policy
