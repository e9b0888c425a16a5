package typecheck

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// ValidateUpdate returns the errors the API server reports when obj
// replaces old: those of [CustomResourceValidator.Validate], less those the
// server ratchets (CRD validation ratcheting, on by default since
// Kubernetes 1.30): a failing value equal to the one old holds at the same
// place (object fields by name, items of x-kubernetes-list-type map lists
// by their keys; other list items are not correlated) is let through, and
// duplicate list-type set or map items are refused only when old held
// none. nil
// when obj's kind is not one of the CRDs'. Neither object is modified.
func (v *CustomResourceValidator) ValidateUpdate(obj, old *unstructured.Unstructured) field.ErrorList {
	if old == nil {
		return v.Validate(obj)
	}
	if v == nil || obj == nil {
		return nil
	}
	cv := v.kinds[obj.GroupVersionKind()]
	if cv == nil {
		return nil
	}
	newContent, oldContent := cv.defaulted(obj), cv.defaulted(old)
	r := &ratchet{c: &correlated{new: newContent, old: oldContent, schema: cv.schema}, schema: cv.schema, formats: strfmt.Default}
	errs := resultErrors(r.Validate(nil))
	// Duplicate list items are refused only when old had none.
	if len(listErrors(nil, cv.schema, oldContent)) == 0 {
		errs = append(errs, listErrors(nil, cv.schema, newContent)...)
	}
	return sortErrors(errs)
}

// ratchet validates one correlated value; its errors are dropped (kept as
// warnings, as the server does) when the value equals the old one.
type ratchet struct {
	c       *correlated
	schema  *spec.Schema
	root    any
	path    string
	formats strfmt.Registry
	opts    []validate.Option
}

var _ validate.ValueValidator = (*ratchet)(nil)

// SetPath implements validate.ValueValidator; the path is fixed when built.
func (r *ratchet) SetPath(string) {}

// Applies implements validate.ValueValidator: it validates every value.
func (r *ratchet) Applies(any, reflect.Kind) bool { return true }

// Validate implements validate.ValueValidator; it validates the new value
// of its correlation.
func (r *ratchet) Validate(any) *validate.Result {
	opts := append([]validate.Option{func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = r.field
		o.NewValidatorForIndex = r.index
	}}, r.opts...)
	res := validate.NewSchemaValidator(r.schema, r.root, r.path, r.formats, opts...).Validate(r.c.new)
	if res.IsValid() || !r.c.equal() {
		return res
	}
	out := &validate.Result{}
	out.MergeAsWarnings(res)
	return out
}

func (r *ratchet) field(name string, s *spec.Schema, root any, path string, f strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	c := r.c.key(name)
	if c == nil || (r.path == "" && (name == "kind" || name == "apiVersion")) {
		return validate.NewSchemaValidator(s, root, path, f, opts...)
	}
	return &ratchet{c: c, schema: s, root: root, path: path, formats: f, opts: opts}
}

func (r *ratchet) index(i int, s *spec.Schema, root any, path string, f strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	c := r.c.index(i)
	if c == nil {
		return validate.NewSchemaValidator(s, root, path, f, opts...)
	}
	return &ratchet{c: c, schema: s, root: root, path: path, formats: f, opts: opts}
}

// correlated pairs a new value with the old value at the same place.
type correlated struct {
	new, old any
	schema   *spec.Schema
	eq       *bool
	// oldItems indexes old's items by key; set once a map list is
	// correlated (empty when the schema or old list allows no keys).
	oldItems *keyedItems
	children map[any]*correlated
}

// listType returns the schema's x-kubernetes-list-type.
func listType(s *spec.Schema) string {
	t, _ := s.Extensions["x-kubernetes-list-type"].(string)
	return t
}

// mapKeys returns the schema's x-kubernetes-list-map-keys.
func mapKeys(s *spec.Schema) []string {
	l, _ := s.Extensions["x-kubernetes-list-map-keys"].([]any)
	keys := make([]string, 0, len(l))
	for _, k := range l {
		if ks, ok := k.(string); ok {
			keys = append(keys, ks)
		}
	}
	return keys
}

// key returns the correlation of field name, nil when either side lacks it
// or the schema does not describe it.
func (c *correlated) key(name string) *correlated {
	if c == nil || c.schema == nil {
		return nil
	}
	if ch, ok := c.children[name]; ok {
		return ch
	}
	om, ok1 := c.old.(map[string]any)
	nm, ok2 := c.new.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	ov, ok1 := om[name]
	nv, ok2 := nm[name]
	if !ok1 || !ok2 {
		return nil
	}
	var s *spec.Schema
	if p, ok := c.schema.Properties[name]; ok {
		s = &p
	} else if ap := c.schema.AdditionalProperties; ap != nil && ap.Schema != nil {
		s = ap.Schema
	} else {
		return nil
	}
	return c.child(name, &correlated{new: nv, old: ov, schema: s})
}

func (c *correlated) child(k any, ch *correlated) *correlated {
	if c.children == nil {
		c.children = map[any]*correlated{}
	}
	c.children[k] = ch
	return ch
}

// index returns the correlation of item i: only items of map lists are
// correlated, with the old item of the same keys.
func (c *correlated) index(i int) *correlated {
	if c == nil || c.schema == nil {
		return nil
	}
	if ch, ok := c.children[i]; ok {
		return ch
	}
	nl, ok := c.new.([]any)
	if !ok || i >= len(nl) {
		return nil
	}
	ol, ok := c.old.([]any)
	if !ok || listType(c.schema) != "map" {
		return nil
	}
	if c.oldItems == nil {
		c.oldItems = newKeyedItems(c.schema, ol)
	}
	ov := c.oldItems.get(nl[i])
	if ov == nil || c.schema.Items == nil || c.schema.Items.Schema == nil {
		return nil
	}
	return c.child(i, &correlated{new: nl[i], old: ov, schema: c.schema.Items.Schema})
}

// equal reports whether the new value equals the old one, comparing map
// list items by key.
func (c *correlated) equal() bool {
	if c == nil {
		return false
	}
	if c.eq != nil {
		return *c.eq
	}
	res := c.computeEqual()
	c.eq = &res
	return res
}

func (c *correlated) computeEqual() bool {
	if c.new == nil || c.old == nil {
		return c.new == nil && c.old == nil
	}
	ol, oIsList := c.old.([]any)
	nl, nIsList := c.new.([]any)
	om, oIsMap := c.old.(map[string]any)
	nm, nIsMap := c.new.(map[string]any)
	if oIsList != nIsList || oIsMap != nIsMap {
		return false
	}
	switch {
	case oIsList:
		if len(ol) != len(nl) {
			return false
		}
		for i := range nl {
			ch := c.index(i)
			if ch == nil {
				return c.oldItems == nil && reflect.DeepEqual(ol, nl)
			}
			if !ch.equal() {
				return false
			}
		}
		return true
	case oIsMap:
		if len(om) != len(nm) {
			return false
		}
		for k := range nm {
			if ch := c.key(k); ch == nil || !ch.equal() {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(c.old, c.new)
}

// keyedItems finds old map-list items by their keys, indexing them
// lazily.
type keyedItems struct {
	keys    []string
	byKey   map[any]any
	pending []any
}

// newKeyedItems indexes items of a map list; a schema that is not a map
// list with keys, or no items, finds nothing.
func newKeyedItems(s *spec.Schema, items []any) *keyedItems {
	k := &keyedItems{byKey: map[any]any{}}
	if len(s.Type) == 1 && s.Type[0] == "array" && listType(s) == "map" && len(items) > 0 {
		k.keys, k.pending = mapKeys(s), items
	}
	return k
}

// keyOf returns the key of a map-list item: the value of a single key
// field, else the key fields' values joined; false when a key is missing
// or not a scalar.
func (k *keyedItems) keyOf(m map[string]any) (any, bool) {
	if len(k.keys) == 1 {
		switch v := m[k.keys[0]].(type) {
		case bool, float64, int64, string:
			return v, true
		}
		return nil, false
	}
	var b strings.Builder
	for _, name := range k.keys {
		b.WriteByte(0)
		switch v := m[name].(type) {
		case bool:
			fmt.Fprintf(&b, "%t", v)
		case float64:
			fmt.Fprintf(&b, "%f", v)
		case int64:
			fmt.Fprintf(&b, "%d", v)
		case string:
			fmt.Fprintf(&b, "%q", v)
		default:
			return nil, false
		}
	}
	return b.String(), true
}

// get returns the old item with the keys of item, nil when none.
func (k *keyedItems) get(item any) any {
	m, ok := item.(map[string]any)
	if !ok || len(k.keys) == 0 {
		return nil
	}
	key, ok := k.keyOf(m)
	if !ok {
		return nil
	}
	if old, ok := k.byKey[key]; ok {
		return old
	}
	for len(k.pending) > 0 {
		it := k.pending[0]
		k.pending = k.pending[1:]
		im, ok := it.(map[string]any)
		if !ok {
			continue
		}
		ik, ok := k.keyOf(im)
		if !ok {
			continue
		}
		if _, seen := k.byKey[ik]; !seen {
			k.byKey[ik] = im
		}
		if ik == key {
			return im
		}
	}
	return nil
}
