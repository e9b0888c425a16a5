package matching_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/matching"
)

func TestNamespaceMap(t *testing.T) {
	a := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	m := matching.NewNamespaceMap(a, nil)
	if got, err := m.GetNamespace(t.Context(), "a"); err != nil || got != a {
		t.Errorf("GetNamespace(a) = %v, %v; want the namespace", got, err)
	}
	_, err := m.GetNamespace(t.Context(), "b")
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "b" not found` {
		t.Errorf("GetNamespace(b) error = %v, want NotFound namespaces \"b\" not found", err)
	}
}
