package typecheck

import "k8s.io/kube-openapi/pkg/validation/spec"

// resourceFields are the fields of an object's root (or of an embedded
// resource) that pruning leaves alone.
var resourceFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// prune removes, in place, what the API server drops when it decodes a
// custom resource, before defaulting and validation: fields the schema
// does not declare (unless x-kubernetes-preserve-unknown-fields; never
// apiVersion, kind and metadata of the root or of an embedded resource),
// then nulls of non-nullable fields without a default (apiextensions-
// apiserver's structural pruning and PruneNonNullableNullsWithoutDefaults).
func prune(obj map[string]any, s *spec.Schema) {
	root := spec.Schema{}
	ext := spec.Extensions{}
	if s != nil {
		root = *s
		for k, v := range s.Extensions {
			ext[k] = v
		}
	}
	root.Extensions = ext
	root.Extensions["x-kubernetes-embedded-resource"] = true
	pruneUnknown(obj, &root)
	pruneNulls(obj, s)
}

func pruneUnknown(x any, s *spec.Schema) {
	if s != nil && extBool(s, "x-kubernetes-preserve-unknown-fields") {
		pruneKnown(x, s)
		return
	}
	switch v := x.(type) {
	case map[string]any:
		if s == nil {
			clear(v)
			return
		}
		embedded := extBool(s, "x-kubernetes-embedded-resource")
		for k, e := range v {
			if embedded && resourceFields[k] {
				continue
			}
			if p, ok := s.Properties[k]; ok {
				pruneUnknown(e, &p)
			} else if s.AdditionalProperties != nil {
				pruneUnknown(e, s.AdditionalProperties.Schema)
			} else {
				delete(v, k)
			}
		}
	case []any:
		var items *spec.Schema
		if s != nil && s.Items != nil {
			items = s.Items.Schema
		}
		for _, e := range v {
			pruneUnknown(e, items)
		}
	}
}

// pruneKnown prunes under the declared fields of a node that preserves
// unknown ones.
func pruneKnown(x any, s *spec.Schema) {
	if s == nil {
		return
	}
	switch v := x.(type) {
	case map[string]any:
		embedded := extBool(s, "x-kubernetes-embedded-resource")
		for k, e := range v {
			if embedded && resourceFields[k] {
				continue
			}
			if p, ok := s.Properties[k]; ok {
				pruneUnknown(e, &p)
			} else if s.AdditionalProperties != nil {
				pruneUnknown(e, s.AdditionalProperties.Schema)
			}
		}
	case []any:
		var items *spec.Schema
		if s.Items != nil {
			items = s.Items.Schema
		}
		for _, e := range v {
			pruneKnown(e, items)
		}
	}
}

// pruneNulls removes object fields that are null where their schema is
// not nullable and has no default.
func pruneNulls(x any, s *spec.Schema) {
	switch v := x.(type) {
	case map[string]any:
		for k, e := range v {
			fs := fieldSchema(s, k)
			if e == nil && fs != nil && !fs.Nullable && fs.Default == nil {
				delete(v, k)
				continue
			}
			pruneNulls(e, fs)
		}
	case []any:
		var items *spec.Schema
		if s != nil && s.Items != nil {
			items = s.Items.Schema
		}
		for _, e := range v {
			pruneNulls(e, items)
		}
	}
}

// fieldSchema returns the schema of field k of an object of schema s.
func fieldSchema(s *spec.Schema, k string) *spec.Schema {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return &p
	}
	if s.AdditionalProperties != nil {
		return s.AdditionalProperties.Schema
	}
	return nil
}

// extBool returns a boolean vendor extension of s.
func extBool(s *spec.Schema, name string) bool {
	b, _ := s.Extensions.GetBool(name)
	return b
}
