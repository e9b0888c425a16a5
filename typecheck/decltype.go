package typecheck

import (
	"github.com/google/cel-go/common/types"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/celenv/escaping"
)

// Schema extensions the conversion reads.
const (
	extIntOrString      = "x-kubernetes-int-or-string"
	extEmbeddedResource = "x-kubernetes-embedded-resource"
	// intOrStringFormat is the format built-in IntOrString fields carry.
	intOrStringFormat = "int-or-string"
)

// schemaTypes is the CEL view of one resource schema: the root type and the
// object types it refers to, by name.
type schemaTypes struct {
	root    *types.Type // nil: not exposed (dyn)
	objects []celenv.ObjectType
}

// declare converts a resource schema (refs inlined) into CEL types the way
// the API server's SchemaDeclType does, naming the root object name, nested
// objects <parent>.<field>, list elements <list>.@idx and map values
// <map>.@elem.
func declare(s *spec.Schema, name string) schemaTypes {
	var st schemaTypes
	st.root = st.convert(s, true, name)
	return st
}

// convert returns the CEL type of s, or nil when s is not exposed to CEL.
// resource says whether s is the root of a resource or an embedded
// resource, which always exposes apiVersion, kind, metadata.name and
// metadata.generateName.
func (st *schemaTypes) convert(s *spec.Schema, resource bool, name string) *types.Type {
	if s == nil {
		return nil
	}
	if s.Format == intOrStringFormat || boolExtension(s, extIntOrString) {
		return types.DynType
	}
	if resource {
		s = withTypeAndObjectMeta(s)
	}
	typ := ""
	if len(s.Type) > 0 {
		typ = s.Type[0]
	}
	switch typ {
	case "array":
		if s.Items == nil || s.Items.Schema == nil {
			return nil
		}
		elem := st.convert(s.Items.Schema, boolExtension(s.Items.Schema, extEmbeddedResource), name+".@idx")
		if elem == nil {
			return nil
		}
		return types.NewListType(elem)
	case "object":
		if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
			elem := st.convert(ap.Schema, boolExtension(ap.Schema, extEmbeddedResource), name+".@elem")
			if elem == nil {
				return nil
			}
			return types.NewMapType(types.StringType, elem)
		}
		fields := make(map[string]*types.Type, len(s.Properties))
		for prop, ps := range s.Properties {
			field, ok := escaping.Escape(prop)
			if !ok {
				continue
			}
			ps := ps
			if t := st.convert(&ps, boolExtension(&ps, extEmbeddedResource), name+"."+field); t != nil {
				fields[field] = t
			}
		}
		st.objects = append(st.objects, celenv.ObjectType{Name: name, Fields: fields})
		return types.NewObjectType(name)
	case "string":
		switch s.Format {
		case "byte":
			return types.BytesType
		case "duration":
			return types.DurationType
		case "date", "date-time":
			return types.TimestampType
		}
		return types.StringType
	case "boolean":
		return types.BoolType
	case "number":
		return types.DoubleType
	case "integer":
		return types.IntType
	}
	return nil
}

// withTypeAndObjectMeta returns s, or a shallow copy of it whose kind,
// apiVersion and metadata (with only name and generateName) are declared,
// unless s already declares kind, apiVersion, metadata.name and
// metadata.generateName with the right types.
func withTypeAndObjectMeta(s *spec.Schema) *spec.Schema {
	if s.Properties != nil &&
		s.Properties["kind"].Type.Contains("string") &&
		s.Properties["apiVersion"].Type.Contains("string") &&
		s.Properties["metadata"].Type.Contains("object") &&
		s.Properties["metadata"].Properties != nil &&
		s.Properties["metadata"].Properties["name"].Type.Contains("string") &&
		s.Properties["metadata"].Properties["generateName"].Type.Contains("string") {
		return s
	}
	out := *s
	props := make(map[string]spec.Schema, len(s.Properties)+3)
	for k, v := range s.Properties {
		props[k] = v
	}
	props["kind"] = *spec.StringProperty()
	props["apiVersion"] = *spec.StringProperty()
	props["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{
		Type: spec.StringOrArray{"object"},
		Properties: map[string]spec.Schema{
			"name":         *spec.StringProperty(),
			"generateName": *spec.StringProperty(),
		},
	}}
	out.Properties = props
	return &out
}

// boolExtension reports whether the extension key is set to true.
func boolExtension(s *spec.Schema, key string) bool {
	v, ok := s.Extensions.GetBool(key)
	return ok && v
}
