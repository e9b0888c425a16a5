// Package params finds the parameter objects a ValidatingAdmissionPolicy is
// evaluated with, as the Kubernetes API server does.
//
// A policy's spec.paramKind names a kind; each binding's spec.paramRef picks
// objects of that kind, by name or by label selector, in a namespace or
// cluster-wide. [Resolve] applies the API server's rules to one binding and
// one request and returns the objects to evaluate, asking a [Source] for
// them. The library never talks to a cluster itself: the caller supplies the
// Source, either the in-memory [Static] or its own implementation.
//
//	limits, err := params.Resolve(ctx, src, params.Request{
//		ParamKind:        policy.Spec.ParamKind,
//		ParamRef:         binding.Spec.ParamRef,
//		Namespaced:       true, // from the caller's REST mapping of the kind
//		RequestNamespace: "team-a",
//	})
//
// The result is read as follows: a single nil element means "evaluate once,
// with params = null" (no paramKind or no paramRef); an empty slice means
// "evaluate nothing for this binding" (nothing found, parameterNotFoundAction
// Allow); otherwise the policy is evaluated once per object.
//
// # Feeding a Source from an informer cache
//
// A controller usually watches its parameter kinds already. [SourceFunc]
// turns its informer cache into a Source without this package depending on
// client-go. With the GenericLister of client-go's shared (or dynamic)
// informers:
//
//	// listers holds one lister per parameter kind the controller watches.
//	var listers map[schema.GroupVersionKind]cache.GenericLister
//
//	src := params.SourceFunc(func(ctx context.Context, q params.Query) ([]runtime.Object, error) {
//		lister, ok := listers[q.Kind]
//		if !ok {
//			return nil, fmt.Errorf("param kind %v is not watched", q.Kind)
//		}
//		var l cache.GenericNamespaceLister = lister // cluster-wide
//		if q.Namespace != "" {
//			l = lister.ByNamespace(q.Namespace)
//		}
//		if q.Name != "" {
//			obj, err := l.Get(q.Name) // a NotFound error counts as "none found"
//			if err != nil {
//				return nil, err
//			}
//			return []runtime.Object{obj}, nil
//		}
//		return l.List(q.Selector)
//	})
//
// Objects served by typed informers carry no apiVersion and kind; the API
// server adds them from spec.paramKind before evaluation, and so must the
// evaluator (this package returns objects unchanged). A controller-runtime
// client.Reader works the same way, with Get and List on unstructured
// objects of q.Kind, client.InNamespace(q.Namespace) and
// client.MatchingLabelsSelector{Selector: q.Selector}.
//
// # Errors
//
// Configuration errors use the API server's texts, which the evaluator
// reports as "failed to configure binding: <text>": [ErrParamNotFound],
// [ErrNamespaceRequired], [ErrNamespaceNotAllowed], [ErrNameAndSelector],
// [ErrNoNameOrSelector], and label selector errors from
// [k8s.io/apimachinery/pkg/apis/meta/v1.LabelSelectorAsSelector]. Errors from
// the Source are returned unchanged.
//
// # Concurrency
//
// Resolve and [Static] are safe for concurrent use; Sources must be too.
// Neither Resolve nor Static modifies the objects it is given or returns.
//
// # Compatibility
//
// The rules follow CollectParams in k8s.io/apiserver v0.37.2
// (pkg/admission/plugin/policy/generic/policy_dispatcher.go). The API server
// returns selected objects in the unspecified order of its informer cache;
// Resolve sorts them by namespace, then name, so that results are
// deterministic. The API server's informer-only errors (kind not known, not
// yet synced) have no counterpart: a Source reports such problems itself.
package params
