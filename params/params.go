package params

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The configuration errors Resolve reports. Their texts are those of the API
// server (k8s.io/apiserver generic CollectParams), which prefixes them with
// "failed to configure binding: " in the final denial. Test for them with
// [errors.Is].
var (
	// ErrParamNotFound is returned when no parameter matched the binding's
	// paramRef and its parameterNotFoundAction is Deny.
	ErrParamNotFound = errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")

	// ErrNamespaceRequired is returned when the paramKind is namespaced,
	// paramRef.namespace is empty and the request has no namespace either
	// (a cluster-scoped request), so there is no namespace to search.
	ErrNamespaceRequired = errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")

	// ErrNamespaceNotAllowed is returned when paramRef.namespace is set but
	// the paramKind is cluster-scoped.
	ErrNamespaceNotAllowed = errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")

	// ErrNameAndSelector is returned when paramRef sets both name and
	// selector. API validation rejects such bindings; the check is repeated
	// here as the API server does.
	ErrNameAndSelector = errors.New("paramRef.name and paramRef.selector are mutually exclusive")

	// ErrNoNameOrSelector is returned when paramRef sets neither name nor
	// selector (also rejected by API validation).
	ErrNoNameOrSelector = errors.New("one of name or selector must be provided")
)

// Source supplies parameter objects. Implementations must be safe for
// concurrent use and must not modify the objects they have returned; callers
// of Find must not modify them either.
//
// Find returns every object of q.Kind that matches q. An empty result (nil
// or empty slice with a nil error) means that nothing was found; for a query
// by name an error for which [apierrors.IsNotFound] reports true means the
// same, so a Source may pass through the NotFound error of a Kubernetes
// client or lister unchanged. Every other error is reported by [Resolve] as
// is. The order of the result does not matter: Resolve sorts it.
type Source interface {
	Find(ctx context.Context, q Query) ([]runtime.Object, error)
}

// SourceFunc adapts an ordinary function to a [Source].
type SourceFunc func(ctx context.Context, q Query) ([]runtime.Object, error)

// Find calls f(ctx, q).
func (f SourceFunc) Find(ctx context.Context, q Query) ([]runtime.Object, error) {
	return f(ctx, q)
}

var (
	_ Source = SourceFunc(nil)
	_ Source = (*Static)(nil)
)

// Query describes the parameter objects a binding refers to.
type Query struct {
	// Kind is the group, version and kind named by the policy's paramKind.
	Kind schema.GroupVersionKind
	// Namespace is the namespace to search. It is "" for cluster-scoped
	// kinds; Resolve never sends "" for a namespaced kind.
	Namespace string
	// Name, when non-empty, asks for the single object with that name. At
	// most one object may be returned.
	Name string
	// Selector, set when Name is empty, asks for every object in Namespace
	// whose labels it matches. The selector of `paramRef.selector: {}`
	// matches everything.
	Selector labels.Selector
}

// String renders q for error messages, e.g.
// `rules.example.com/v1, Kind=ReplicaLimit "default/limit"`.
func (q Query) String() string {
	var target string
	switch {
	case q.Name != "" && q.Namespace != "":
		target = fmt.Sprintf("%q", q.Namespace+"/"+q.Name)
	case q.Name != "":
		target = fmt.Sprintf("%q", q.Name)
	case q.Selector != nil:
		target = fmt.Sprintf("selector %q", q.Selector.String())
		if q.Namespace != "" {
			target += fmt.Sprintf(" in namespace %q", q.Namespace)
		}
	default:
		target = "(no name or selector)"
	}
	return q.Kind.String() + " " + target
}

// Request holds what [Resolve] needs to know about one (policy, binding,
// request) combination.
type Request struct {
	// ParamKind is the policy's spec.paramKind; nil when the policy takes
	// no parameters.
	ParamKind *admissionregistrationv1.ParamKind
	// ParamRef is the binding's spec.paramRef; nil when the binding names
	// no parameters.
	ParamRef *admissionregistrationv1.ParamRef
	// Namespaced tells whether ParamKind is a namespaced kind. The caller
	// resolves it (for example with a REST mapper); an unknown kind is a
	// policy configuration error that the caller reports before calling
	// Resolve.
	Namespaced bool
	// RequestNamespace is the namespace of the admission request: "" for
	// cluster-scoped objects and, as the API server sets it, the namespace's
	// own name for a request on a Namespace object.
	RequestNamespace string
}

// Resolve returns the parameter objects the policy must be evaluated with for
// one binding, following the API server's rules (k8s.io/apiserver generic
// CollectParams):
//
//   - ParamKind or ParamRef nil: a single nil element, meaning "evaluate
//     once with params = null". A ParamRef without ParamKind is ignored.
//   - Namespaced kind: the namespace searched is paramRef.namespace, or the
//     request's namespace when that is empty; if both are empty the result
//     is [ErrNamespaceRequired].
//   - Cluster-scoped kind with paramRef.namespace set: [ErrNamespaceNotAllowed].
//   - paramRef.name: the object with that name ([ErrNameAndSelector] if a
//     selector is set too).
//   - paramRef.selector: every object it matches in the namespace (the whole
//     cluster for cluster-scoped kinds); `{}` matches all. The selector is
//     converted with [metav1.LabelSelectorAsSelector], whose error is
//     returned unchanged.
//   - Neither name nor selector: [ErrNoNameOrSelector].
//   - Nothing found: [ErrParamNotFound] when parameterNotFoundAction is Deny,
//     otherwise an empty, non-nil slice, meaning "nothing to evaluate".
//
// Errors of src are returned unchanged, except NotFound errors for a query by
// name, which count as "nothing found". A nil src behaves as an empty store.
//
// Found objects are returned sorted by namespace, then name (stable for
// objects without metadata). The API server uses the order of its informer
// cache, which is unspecified; this is the one deliberate difference. The
// returned slice is new, the objects in it are those of src and must not be
// modified.
func Resolve(ctx context.Context, src Source, r Request) ([]runtime.Object, error) {
	if r.ParamKind == nil || r.ParamRef == nil {
		return []runtime.Object{nil}, nil
	}
	ref := r.ParamRef

	// The namespace rules are checked before anything else, as upstream does
	// while it picks the lister.
	var namespace string
	if r.Namespaced {
		namespace = ref.Namespace
		if namespace == "" {
			namespace = r.RequestNamespace
		}
		if namespace == "" {
			return nil, ErrNamespaceRequired
		}
	} else if ref.Namespace != "" {
		return nil, ErrNamespaceNotAllowed
	}

	q := Query{Namespace: namespace}
	switch {
	case ref.Name != "" && ref.Selector != nil:
		return nil, ErrNameAndSelector
	case ref.Name != "":
		q.Name = ref.Name
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		q.Selector = sel
	default:
		return nil, ErrNoNameOrSelector
	}

	gv, err := schema.ParseGroupVersion(r.ParamKind.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("invalid paramKind APIVersion %q: %w", r.ParamKind.APIVersion, err)
	}
	q.Kind = gv.WithKind(r.ParamKind.Kind)

	found, err := find(ctx, src, q)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		if ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
			return nil, ErrParamNotFound
		}
		return []runtime.Object{}, nil
	}
	return sortByNamespacedName(found), nil
}

// find queries src and checks the shape of its answer.
func find(ctx context.Context, src Source, q Query) ([]runtime.Object, error) {
	if src == nil {
		return nil, nil
	}
	found, err := src.Find(ctx, q)
	if err != nil {
		if q.Name != "" && apierrors.IsNotFound(err) {
			// A lister or client Get reports a missing object this way;
			// upstream routes it to parameterNotFoundAction.
			return nil, nil
		}
		return nil, err
	}
	for _, obj := range found {
		if isNil(obj) {
			return nil, fmt.Errorf("params: source returned a nil object for %v", q)
		}
	}
	if q.Name != "" && len(found) > 1 {
		return nil, fmt.Errorf("params: source returned %d objects for %v, want at most one", len(found), q)
	}
	return found, nil
}

// isNil reports whether obj is nil or a nil pointer, on which the methods of
// runtime.Object would panic.
func isNil(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// sortByNamespacedName returns a sorted copy of objs; the source's slice is
// left untouched.
func sortByNamespacedName(objs []runtime.Object) []runtime.Object {
	type keyed struct {
		namespace, name string
		obj             runtime.Object
	}
	ks := make([]keyed, len(objs))
	for i, obj := range objs {
		ks[i].obj = obj
		if m, err := meta.Accessor(obj); err == nil {
			ks[i].namespace, ks[i].name = m.GetNamespace(), m.GetName()
		}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
	})
	out := make([]runtime.Object, len(ks))
	for i := range ks {
		out[i] = ks[i].obj
	}
	return out
}
