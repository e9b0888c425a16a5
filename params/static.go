package params

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Static is an immutable, in-memory [Source], convenient for tests, command
// line tools and fixed configurations. It is safe for concurrent use.
//
// Its Find filters by kind (exact group, version and kind; no conversion
// between versions), namespace, name and label selector, and returns objects
// sorted by namespace, then name:
//
//   - A query with a Namespace only sees objects in that namespace. A query
//     without one sees every object of the kind, as a cluster-wide lister
//     does; by name it only finds objects that have no namespace.
//   - A query with a Name returns at most that one object; otherwise its
//     Selector is applied to the objects' labels (a nil Selector matches
//     everything).
//
// The returned objects are shared between calls and must not be modified.
type Static struct {
	byKind map[schema.GroupVersionKind][]staticEntry
}

type staticEntry struct {
	namespace, name string
	labels          labels.Set
	obj             runtime.Object
}

// NewStatic returns a Static holding deep copies of objs, so later changes to
// objs do not affect it.
//
// Each object's kind is read from the object itself: the apiVersion and kind
// of an *unstructured.Unstructured, or the TypeMeta of a typed k8s.io/api
// struct. Typed objects often leave TypeMeta empty (decoders and informers
// clear it), and Static has no scheme to guess it from, so such objects must
// get their TypeMeta set before being passed in:
//
//	cm := &corev1.ConfigMap{
//		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
//		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "default"},
//	}
//
// NewStatic fails on a nil object, an object without kind or version, an
// object without metadata or name, and on two objects of the same kind with
// the same namespace and name.
func NewStatic(objs ...runtime.Object) (*Static, error) {
	s := &Static{byKind: make(map[schema.GroupVersionKind][]staticEntry)}
	for i, obj := range objs {
		if isNil(obj) {
			return nil, fmt.Errorf("params: object %d is nil", i)
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.Kind == "" || gvk.Version == "" {
			return nil, fmt.Errorf("params: object %d (%T) has no apiVersion or kind; set its TypeMeta", i, obj)
		}
		if u, ok := obj.(runtime.Unstructured); ok {
			// DeepCopy of unstructured content panics on non-JSON values
			// (an int instead of an int64, say); report them instead.
			if err := checkJSON(u.UnstructuredContent()); err != nil {
				return nil, fmt.Errorf("params: object %d (%v): %w", i, gvk, err)
			}
		}
		cp := obj.DeepCopyObject()
		if cp == nil {
			return nil, fmt.Errorf("params: object %d (%v) could not be copied", i, gvk)
		}
		// Read metadata from the copy, so the label map is not shared with
		// the caller either.
		m, err := meta.Accessor(cp)
		if err != nil {
			return nil, fmt.Errorf("params: object %d (%v): %w", i, gvk, err)
		}
		if m.GetName() == "" {
			return nil, fmt.Errorf("params: object %d (%v) has no name", i, gvk)
		}
		s.byKind[gvk] = append(s.byKind[gvk], staticEntry{
			namespace: m.GetNamespace(),
			name:      m.GetName(),
			labels:    labels.Set(m.GetLabels()),
			obj:       cp,
		})
	}
	// Visit kinds in a fixed order so that the reported duplicate is always
	// the same one.
	kinds := slices.SortedFunc(maps.Keys(s.byKind), func(a, b schema.GroupVersionKind) int {
		return cmp.Compare(a.String(), b.String())
	})
	for _, gvk := range kinds {
		entries := s.byKind[gvk]
		slices.SortFunc(entries, compareEntries)
		for i := 1; i < len(entries); i++ {
			if compareEntries(entries[i-1], entries[i]) == 0 {
				return nil, fmt.Errorf("params: duplicate %v %q", gvk, namespacedName(entries[i].namespace, entries[i].name))
			}
		}
	}
	return s, nil
}

// Find implements [Source]. It never fails, ignores ctx, and returns nil when
// nothing matches. A nil *Static is an empty store.
func (s *Static) Find(_ context.Context, q Query) ([]runtime.Object, error) {
	if s == nil {
		return nil, nil
	}
	var out []runtime.Object
	for _, e := range s.byKind[q.Kind] {
		if q.Namespace != "" && e.namespace != q.Namespace {
			continue
		}
		if q.Name != "" {
			if e.name == q.Name && e.namespace == q.Namespace {
				return []runtime.Object{e.obj}, nil
			}
			continue
		}
		if q.Selector != nil && !q.Selector.Matches(e.labels) {
			continue
		}
		out = append(out, e.obj)
	}
	return out, nil
}

// checkJSON reports the first value in v that is not one of the types of
// decoded JSON that unstructured objects may hold.
func checkJSON(v any) error {
	switch v := v.(type) {
	case nil, string, int64, float64, bool, json.Number:
		return nil
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := checkJSON(v[k]); err != nil {
				return fmt.Errorf("field %q: %w", k, err)
			}
		}
		return nil
	case []any:
		for i, e := range v {
			if err := checkJSON(e); err != nil {
				return fmt.Errorf("index %d: %w", i, err)
			}
		}
		return nil
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
}

func compareEntries(a, b staticEntry) int {
	return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name))
}

func namespacedName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
