package matching

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NamespaceMap is an in-memory [NamespaceGetter] keyed by namespace name. A
// name it does not hold is the NotFound error the API server returns
// (namespaces "x" not found). It is safe for concurrent use as long as it
// is not modified; the namespaces it returns must not be modified.
type NamespaceMap map[string]*corev1.Namespace

var _ NamespaceGetter = NamespaceMap(nil)

// NewNamespaceMap indexes namespaces by name; a later namespace of the same
// name replaces an earlier one. Nil entries are skipped.
func NewNamespaceMap(namespaces ...*corev1.Namespace) NamespaceMap {
	m := make(NamespaceMap, len(namespaces))
	for _, ns := range namespaces {
		if ns != nil {
			m[ns.Name] = ns
		}
	}
	return m
}

// GetNamespace returns the namespace called name.
func (m NamespaceMap) GetNamespace(_ context.Context, name string) (*corev1.Namespace, error) {
	if ns, ok := m[name]; ok {
		return ns, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}
