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
// unstructured object of a built-in kind comes back as its defaulted typed
// struct (see [Typed]), the form the API server and the evaluator hold it
// in, so that it is not converted again; any other object (custom kinds)
// comes back as it is. obj is not modified.
func Default(obj runtime.Object) (runtime.Object, error) {
	switch o := obj.(type) {
	case nil:
		return nil, nil
	case *unstructured.Unstructured:
		if !isTyped(o.GroupVersionKind()) {
			return obj, nil
		}
		typed, err := Typed(o)
		if err != nil {
			return nil, err
		}
		Scheme().Default(typed)
		return typed, nil
	case runtime.Unstructured:
		return obj, nil
	}
	copied := obj.DeepCopyObject()
	Scheme().Default(copied)
	return copied, nil
}

// Typed returns an unstructured object of a built-in kind as the typed
// k8s.io/api struct the API server holds it in (fields the type does not
// know are dropped, as [DecodeJSON] drops them); any other object comes back
// as it is. An object that does not decode into its type is an error. obj
// is not modified.
func Typed(obj runtime.Object) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !isTyped(u.GroupVersionKind()) {
		return obj, nil
	}
	gvk := u.GroupVersionKind()
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", gvk, err)
	}
	return decodeTyped(raw, gvk)
}
