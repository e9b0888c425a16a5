package mutation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Names of schemaconv's two common types and of the built-in ObjectMeta.
const (
	untypedName    = "__untyped_atomic_"
	deducedName    = "__untyped_deduced_"
	objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
)

// WithCRDs returns a converter that knows c's kinds and those of the given
// apiextensions.k8s.io/v1 CustomResourceDefinitions, one per version that
// has a schema. Each CRD schema is converted as the API server publishes it
// (apiVersion and kind declared as strings, metadata as ObjectMeta) and as
// kube-openapi's schemaconv converts it: lists without
// x-kubernetes-list-type are atomic, x-kubernetes-preserve-unknown-fields
// subtrees accept any field. Errors carry the CRD name and field path.
func (c *TypeConverter) WithCRDs(crds []*unstructured.Unstructured) (*TypeConverter, error) {
	if len(crds) == 0 {
		return c, nil
	}
	out := &TypeConverter{kinds: make(map[schema.GroupVersionKind]string, len(c.kinds)+len(crds)), defaults: maps.Clone(c.defaults)}
	for k, v := range c.kinds {
		out.kinds[k] = v
	}
	types := slices.Clone(c.parser.Schema.Types)
	for _, u := range crds {
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for i, v := range versions {
			vm, _ := v.(map[string]any)
			name, _, _ := unstructured.NestedString(vm, "name")
			raw, found, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
			if !found {
				continue
			}
			conv := &crdConverter{}
			root := conv.parse(publishedRoot(raw), false)
			if len(conv.errs) > 0 {
				return nil, fmt.Errorf("CustomResourceDefinition %q: spec.versions[%d].schema.openAPIV3Schema: %s", u.GetName(), i, strings.Join(conv.errs, "; "))
			}
			typeName := fmt.Sprintf("crd/%s/%s/%s", group, name, kind)
			types = append(types, smdschema.TypeDef{Name: typeName, Atom: root})
			gvk := schema.GroupVersionKind{Group: group, Version: name, Kind: kind}
			out.kinds[gvk] = typeName
			out.defaults = crdDefaults(out.defaults, gvk, raw)
		}
	}
	out.parser = &typed.Parser{Schema: smdschema.Schema{Types: types}}
	return out.index(), nil
}

// publishedRoot is the root schema as the API server publishes it:
// apiVersion and kind strings, metadata the built-in ObjectMeta.
func publishedRoot(s map[string]any) map[string]any {
	r := make(map[string]any, len(s))
	for k, v := range s {
		r[k] = v
	}
	props := map[string]any{}
	if p, ok := s["properties"].(map[string]any); ok {
		for k, v := range p {
			props[k] = v
		}
	}
	props["apiVersion"] = map[string]any{"type": "string"}
	props["kind"] = map[string]any{"type": "string"}
	props["metadata"] = map[string]any{"$ref": objectMetaName}
	r["properties"] = props
	if _, ok := r["type"]; !ok {
		r["type"] = "object"
	}
	return r
}

// crdConverter converts a JSON schema given as unstructured data to a
// structured-merge-diff atom, as kube-openapi's schemaconv converts an
// OpenAPI schema.
type crdConverter struct {
	errs []string
}

func (c *crdConverter) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func (c *crdConverter) parse(s map[string]any, preserve bool) smdschema.Atom {
	if p, ok := s["x-kubernetes-preserve-unknown-fields"].(bool); ok && p {
		preserve = true
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "":
		return smdschema.Atom{Scalar: scalarPtr("untyped"), List: c.list(s, preserve), Map: c.object(s, preserve)}
	case "object":
		return smdschema.Atom{Map: c.object(s, preserve)}
	case "array":
		return smdschema.Atom{List: c.list(s, preserve)}
	case "integer", "number":
		return smdschema.Atom{Scalar: scalarPtr(smdschema.Numeric)}
	case "boolean":
		return smdschema.Atom{Scalar: scalarPtr(smdschema.Boolean)}
	case "string":
		switch f, _ := s["format"].(string); f {
		case "", "byte":
			return smdschema.Atom{Scalar: scalarPtr(smdschema.String)}
		}
		return smdschema.Atom{Scalar: scalarPtr("untyped")}
	}
	c.errorf("unrecognized type: '%v'", typ)
	return smdschema.Atom{Scalar: scalarPtr("untyped")}
}

func scalarPtr(s smdschema.Scalar) *smdschema.Scalar { return &s }

func (c *crdConverter) ref(s map[string]any, preserve bool) smdschema.TypeRef {
	nullable, _ := s["nullable"].(bool)
	if r, ok := s["$ref"].(string); ok && r != "" {
		name := r[strings.LastIndex(r, "/")+1:]
		tr := smdschema.TypeRef{NamedType: &name, Nullable: nullable}
		if rel := c.mapRelationship(s); rel != "" {
			tr.ElementRelationship = &rel
		}
		return tr
	}
	return smdschema.TypeRef{Inlined: c.parse(s, preserve), Nullable: nullable}
}

func (c *crdConverter) object(s map[string]any, preserve bool) *smdschema.Map {
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	m := &smdschema.Map{ElementRelationship: c.mapRelationship(s)}
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		f := smdschema.StructField{Name: n, Type: c.ref(p, preserve)}
		switch d := p["default"].(type) {
		case string, bool, int64, float64:
			f.Default = d
		}
		m.Fields = append(m.Fields, f)
	}
	deduced := deducedName
	switch ap := s["additionalProperties"].(type) {
	case nil:
		if preserve || len(props) == 0 {
			m.ElementType = smdschema.TypeRef{NamedType: &deduced}
		}
	case map[string]any:
		m.ElementType = c.ref(ap, preserve)
	case bool:
		if ap {
			m.ElementType = smdschema.TypeRef{NamedType: &deduced}
		}
	}
	return m
}

func (c *crdConverter) mapRelationship(s map[string]any) smdschema.ElementRelationship {
	v, ok := s["x-kubernetes-map-type"]
	if !ok {
		return ""
	}
	switch v {
	case "atomic":
		return smdschema.Atomic
	case "granular":
		return smdschema.Separable
	}
	c.errorf("unknown map type %v", v)
	return ""
}

func (c *crdConverter) list(s map[string]any, preserve bool) *smdschema.List {
	l := &smdschema.List{ElementRelationship: smdschema.Atomic}
	switch lt := s["x-kubernetes-list-type"]; lt {
	case nil, "atomic":
	case "set":
		l.ElementRelationship = smdschema.Associative
	case "map":
		l.ElementRelationship = smdschema.Associative
		keys, _ := s["x-kubernetes-list-map-keys"].([]any)
		if len(keys) == 0 {
			c.errorf("missing map keys")
		}
		for _, k := range keys {
			ks, ok := k.(string)
			if !ok {
				c.errorf("uninterpreted map keys: %#v", keys)
				break
			}
			l.Keys = append(l.Keys, ks)
		}
	default:
		c.errorf("unknown list type %v", lt)
	}
	switch items := s["items"].(type) {
	case map[string]any:
		l.ElementType = c.ref(items, preserve)
	default:
		if t, _ := s["type"].(string); t != "" {
			c.errorf("`items` must be specified on arrays")
		}
		untyped := untypedName
		l.ElementType = smdschema.TypeRef{NamedType: &untyped}
	}
	return l
}
