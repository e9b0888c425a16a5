package builtin

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Default returns obj as the API server holds a built-in object once it
// has decoded it: with the defaults kube-apiserver 1.37 fills in (the
// defaulting functions registered on [Scheme], see package defaulting).
// A typed object comes back as a defaulted copy of the same type; an
// unstructured object of a built-in kind takes the round trip through its
// typed struct, as [ToUnstructured] does, and comes back unstructured; any
// other object (custom kinds) comes back as it is. obj is not modified.
func Default(obj runtime.Object) (runtime.Object, error) {
	switch o := obj.(type) {
	case nil:
		return nil, nil
	case *unstructured.Unstructured:
		gvk := o.GroupVersionKind()
		if !isTyped(gvk) {
			return obj, nil
		}
		raw, err := json.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding %s: %w", gvk, err)
		}
		typed, err := decodeTyped(raw, gvk)
		if err != nil {
			return nil, err
		}
		Scheme().Default(typed)
		m, err := typedToUnstructured(typed)
		if err != nil {
			return nil, err
		}
		return &unstructured.Unstructured{Object: m}, nil
	case runtime.Unstructured:
		return obj, nil
	}
	copied := obj.DeepCopyObject()
	Scheme().Default(copied)
	return copied, nil
}
