package mutation

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// defaulter holds the defaults of one structural schema node: what the
// API server's CRD handler applies after each mutation (its
// unstructuredDefaulter runs apiextensions-apiserver's structural
// defaulting, pkg/apiserver/schema/defaulting).
type defaulter struct {
	// value is the node's default; nil when it has none.
	value    any
	nullable bool
	props    map[string]*defaulter
	items    *defaulter
	// additional is additionalProperties' schema, when it is one.
	additional *defaulter
}

// newDefaulter reads the defaults of an openAPIV3Schema; nil when no node
// under s has a default, so that defaulting the kind's objects is a no-op.
func newDefaulter(s map[string]any) *defaulter {
	if s == nil {
		return nil
	}
	d := &defaulter{value: s["default"]}
	d.nullable, _ = s["nullable"].(bool)
	has := d.value != nil
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			vm, _ := v.(map[string]any)
			if vm == nil {
				continue
			}
			if d.props == nil {
				d.props = map[string]*defaulter{}
			}
			// A nil entry has no default at or below it; it is kept so
			// that its name is not taken for an additional property.
			c := newDefaulter(vm)
			d.props[k] = c
			has = has || c != nil
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if d.items = newDefaulter(items); d.items != nil {
			has = true
		}
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		if d.additional = newDefaulter(ap); d.additional != nil {
			has = true
		}
	}
	if !has {
		return nil
	}
	return d
}

// apply defaults x in place, as structural defaulting does: a property
// missing from an object, or null where the schema is not nullable, gets a
// copy of its default; then every property, additionalProperties value
// and list item is defaulted in turn (a non-nullable null item or value
// getting its schema's default).
func (d *defaulter) apply(x any) {
	if d == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, p := range d.props {
			if p == nil || p.value == nil {
				continue
			}
			if v, found := x[k]; !found || (v == nil && !p.nullable) {
				x[k] = copyJSON(p.value)
			}
		}
		for k, v := range x {
			if p, found := d.props[k]; found {
				p.apply(v) // a nil p does nothing
			} else if d.additional != nil {
				if v == nil && !d.additional.nullable && d.additional.value != nil {
					x[k] = copyJSON(d.additional.value)
				}
				d.additional.apply(x[k])
			}
		}
	case []any:
		if d.items == nil {
			return
		}
		for i, v := range x {
			if v == nil && !d.items.nullable && d.items.value != nil {
				x[i] = copyJSON(d.items.value)
			}
			d.items.apply(x[i])
		}
	}
}

// copyJSON deep-copies a JSON value; integers become int64, as in
// unstructured objects.
func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyJSON(e)
		}
		return out
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float32:
		return float64(v)
	}
	return v
}

// Default returns obj with the defaults of its kind's CRD schema applied,
// as the API server defaults a custom resource after each mutation; obj
// itself when its kind has no schema defaults or is not unstructured.
// Built-in kinds are defaulted separately, with kube-apiserver 1.37's
// defaulting functions (builtin.Default, package
// internal/builtin/defaulting). obj is not modified.
func (c *TypeConverter) Default(obj runtime.Object) runtime.Object {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || len(c.defaults) == 0 {
		return obj
	}
	d := c.defaults[u.GroupVersionKind()]
	if d == nil {
		return obj
	}
	u = u.DeepCopy()
	d.apply(u.Object)
	return u
}

// crdDefaults reads the defaulter of a CRD version's schema, keyed by kind.
func crdDefaults(out map[schema.GroupVersionKind]*defaulter, gvk schema.GroupVersionKind, raw map[string]any) map[schema.GroupVersionKind]*defaulter {
	d := newDefaulter(raw)
	if d == nil {
		return out
	}
	if out == nil {
		out = map[schema.GroupVersionKind]*defaulter{}
	}
	out[gvk] = d
	return out
}
