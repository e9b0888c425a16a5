package matching

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
)

// namespacesGroupResource is the group resource used in NotFound errors for
// namespaces.
var namespacesGroupResource = schema.GroupResource{Resource: "namespaces"}

// matchNamespaceSelector evaluates a namespaceSelector as the API server's
// namespace.Matcher.MatchNamespaceSelector. The returned error is an
// apierrors StatusError: the getter's own 404 for a missing namespace, an
// InternalError for everything else.
func matchNamespaceSelector(ctx context.Context, sel *metav1.LabelSelector, a *Attributes, g NamespaceGetter) (bool, error) {
	// Cluster-scoped objects other than namespaces are always selected, and
	// the selector is not even parsed. The group is deliberately not
	// compared, as upstream.
	if a.Namespace == "" && a.Resource.Resource != "namespaces" {
		return true, nil
	}
	s, err := selectorFor(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	nsLabels, err := namespaceLabels(ctx, a, g)
	if err != nil {
		return false, namespaceLookupError(err)
	}
	return s.Matches(labels.Set(nsLabels)), nil
}

// namespaceLookupError is the selector error for a failed namespace lookup.
// Upstream answers a missing namespace with a 404 carrying the getter's
// status, for backwards compatibility; a NotFound that is only wrapped (not
// itself an APIStatus) and every other failure become an InternalError,
// also as upstream.
func namespaceLookupError(err error) error {
	if apierrors.IsNotFound(err) {
		if st, ok := err.(apierrors.APIStatus); ok {
			return &apierrors.StatusError{ErrStatus: st.Status()}
		}
	}
	return apierrors.NewInternalError(err)
}

// namespaceLabels returns the labels a namespaceSelector is matched against.
// A CREATE or UPDATE of a namespace itself uses the incoming object (the
// stored one is not written yet); every other request, including DELETE of a
// namespace and namespace subresources, uses the stored namespace named by
// a.Namespace.
func namespaceLabels(ctx context.Context, a *Attributes, g NamespaceGetter) (map[string]string, error) {
	if a.Resource.Resource == "namespaces" && a.SubResource == "" &&
		(a.Operation == "CREATE" || a.Operation == "UPDATE") {
		acc, err := accessor(a.Object)
		if err != nil {
			return nil, err
		}
		return acc.GetLabels(), nil
	}
	if g == nil {
		return nil, apierrors.NewNotFound(namespacesGroupResource, a.Namespace)
	}
	ns, err := g.GetNamespace(ctx, a.Namespace)
	if err != nil {
		return nil, err
	}
	if ns == nil {
		// A getter breaking its contract with (nil, nil) is taken to mean
		// the namespace does not exist.
		return nil, apierrors.NewNotFound(namespacesGroupResource, a.Namespace)
	}
	return ns.Labels, nil
}

// matchObjectSelector evaluates an objectSelector as the API server's
// object.Matcher.MatchObjectSelector: an empty selector selects everything;
// otherwise the new or the old object must carry matching labels.
func matchObjectSelector(sel *metav1.LabelSelector, a *Attributes) (bool, error) {
	s, err := selectorFor(sel)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	if s.Empty() {
		return true, nil
	}
	return objectLabelsMatch(a.Object, s) || objectLabelsMatch(a.OldObject, s), nil
}

// objectLabelsMatch reports whether obj has object metadata whose labels s
// selects. Nil objects and objects without metadata (such as the options
// object of a CONNECT request) are never selected.
func objectLabelsMatch(obj runtime.Object, s labels.Selector) bool {
	acc, err := accessor(obj)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(acc.GetLabels()))
}

// accessor is meta.Accessor, with a nil pointer inside a non-nil interface
// treated like nil instead of being dereferenced.
func accessor(obj runtime.Object) (metav1.Object, error) {
	if obj != nil {
		if v := reflect.ValueOf(obj); v.Kind() == reflect.Pointer && v.IsNil() {
			obj = nil
		}
	}
	return meta.Accessor(obj)
}

// selectorFor converts a LabelSelector exactly as
// metav1.LabelSelectorAsSelector does (nil selects nothing, empty selects
// everything), except that matchLabels are visited in sorted key order so
// that the error for several invalid labels is deterministic.
func selectorFor(ps *metav1.LabelSelector) (labels.Selector, error) {
	if ps == nil {
		return labels.Nothing(), nil
	}
	if len(ps.MatchLabels)+len(ps.MatchExpressions) == 0 {
		return labels.Everything(), nil
	}
	reqs := make([]labels.Requirement, 0, len(ps.MatchLabels)+len(ps.MatchExpressions))
	for _, k := range sortedKeys(ps.MatchLabels) {
		r, err := labels.NewRequirement(k, selection.Equals, []string{ps.MatchLabels[k]})
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, *r)
	}
	for _, expr := range ps.MatchExpressions {
		var op selection.Operator
		switch expr.Operator {
		case metav1.LabelSelectorOpIn:
			op = selection.In
		case metav1.LabelSelectorOpNotIn:
			op = selection.NotIn
		case metav1.LabelSelectorOpExists:
			op = selection.Exists
		case metav1.LabelSelectorOpDoesNotExist:
			op = selection.DoesNotExist
		default:
			return nil, fmt.Errorf("%q is not a valid label selector operator", expr.Operator)
		}
		r, err := labels.NewRequirement(expr.Key, op, append([]string(nil), expr.Values...))
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, *r)
	}
	return labels.NewSelector().Add(reqs...), nil
}

// sortedKeys returns the keys of m in ascending order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
