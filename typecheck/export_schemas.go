package typecheck

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// BuiltinDefinitions exposes the embedded OpenAPI definitions that
// [BuiltinResolver] serves, before their $refs are inlined, so that another
// ref-inlining resolver (such as the API server's own) can be run over
// exactly the same schemas, for example in differential tests.
//
// kinds maps every built-in kind to the name of its definition; the map is
// a fresh copy. lookup returns the definition with the given name (the
// string form of the $refs inside definitions), decoded anew on every call,
// or false when there is no such definition. err is set only when the
// embedded file cannot be decoded.
func BuiltinDefinitions() (kinds map[schema.GroupVersionKind]string, lookup func(name string) (*spec.Schema, bool), err error) {
	d, err := builtinDefinitions()
	if err != nil {
		return nil, nil, err
	}
	kinds = make(map[schema.GroupVersionKind]string, len(d.kinds))
	for gvk, name := range d.kinds {
		kinds[gvk] = name
	}
	lookup = func(name string) (*spec.Schema, bool) {
		// A fresh cache per call keeps every answer independent of earlier ones.
		return d.lookup()(name)
	}
	return kinds, lookup, nil
}
