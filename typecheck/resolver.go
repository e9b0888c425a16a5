package typecheck

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/internal/builtin"
)

// ErrSchemaNotFound is wrapped by the errors a [SchemaResolver] returns for a
// kind it does not know. Type checking skips such kinds, as the API server
// does; [Checker.Unchecked] lists them.
var ErrSchemaNotFound = errors.New("schema not found")

// SchemaResolver finds the OpenAPI schema of a kind. The schema must have its
// $refs inlined. Errors that do not wrap [ErrSchemaNotFound] are internal
// errors; type checking skips those kinds as well.
type SchemaResolver interface {
	ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error)
}

// SchemaResolverFunc adapts a function to [SchemaResolver].
type SchemaResolverFunc func(gvk schema.GroupVersionKind) (*spec.Schema, error)

// ResolveSchema calls f.
func (f SchemaResolverFunc) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return f(gvk)
}

// Combine returns a resolver that asks each resolver in turn and returns the
// first answer that is not a not-found error.
func Combine(resolvers ...SchemaResolver) SchemaResolver {
	rs := append([]SchemaResolver(nil), resolvers...)
	return SchemaResolverFunc(func(gvk schema.GroupVersionKind) (*spec.Schema, error) {
		for _, r := range rs {
			if r == nil {
				continue
			}
			s, err := r.ResolveSchema(gvk)
			if err == nil || !errors.Is(err, ErrSchemaNotFound) {
				return s, err
			}
		}
		return nil, fmt.Errorf("cannot resolve %v: %w", gvk, ErrSchemaNotFound)
	})
}

// populateRefs returns the definition named root with every $ref (direct, or
// the first one found in allOf) replaced by the referenced definition, the
// way the API server's resolver does: a reference to a definition already
// being expanded on the current path becomes {type: object}; properties,
// additionalProperties and items are followed, nothing else.
func populateRefs(lookup func(ref string) (*spec.Schema, bool), root string) (*spec.Schema, error) {
	s, ok := lookup(root)
	if !ok {
		return nil, fmt.Errorf("internal error: cannot resolve Ref for root schema %q: %w", root, ErrSchemaNotFound)
	}
	return expandRefs(lookup, map[string]bool{root: true}, s)
}

func expandRefs(lookup func(ref string) (*spec.Schema, bool), onPath map[string]bool, s *spec.Schema) (*spec.Schema, error) {
	out := *s
	if ref, ok := refOf(s); ok {
		if onPath[ref] {
			return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}}}, nil
		}
		target, ok := lookup(ref)
		if !ok {
			return nil, fmt.Errorf("internal error: cannot resolve Ref %q: %w", ref, ErrSchemaNotFound)
		}
		onPath[ref] = true
		defer delete(onPath, ref)
		out = *target
	}
	if out.Properties != nil {
		props := make(map[string]spec.Schema, len(out.Properties))
		for name, p := range out.Properties {
			e, err := expandRefs(lookup, onPath, &p)
			if err != nil {
				return nil, err
			}
			props[name] = *e
		}
		out.Properties = props
	}
	if out.AdditionalProperties != nil && out.AdditionalProperties.Schema != nil {
		e, err := expandRefs(lookup, onPath, out.AdditionalProperties.Schema)
		if err != nil {
			return nil, err
		}
		ap := *out.AdditionalProperties
		ap.Schema = e
		out.AdditionalProperties = &ap
	}
	if out.Items != nil && out.Items.Schema != nil {
		e, err := expandRefs(lookup, onPath, out.Items.Schema)
		if err != nil {
			return nil, err
		}
		items := *out.Items
		items.Schema = e
		out.Items = &items
	}
	return &out, nil
}

func refOf(s *spec.Schema) (string, bool) {
	if s.Ref.GetURL() != nil {
		return s.Ref.String(), true
	}
	for i := range s.AllOf {
		if ref, ok := refOf(&s.AllOf[i]); ok {
			return ref, true
		}
	}
	return "", false
}

// objectMetaDefinition is the definition name of ObjectMeta in the embedded
// schemas.
const objectMetaDefinition = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// crdResolver serves the schemas of custom kinds.
type crdResolver struct {
	schemas map[schema.GroupVersionKind]*spec.Schema
}

// NewCRDResolver returns a [SchemaResolver] for the served versions of crds
// (apiextensions.k8s.io/v1 CustomResourceDefinition objects), built from each
// version's schema.openAPIV3Schema the way the API server publishes it:
// apiVersion and kind are strings and metadata is the full ObjectMeta. A
// version without a schema resolves to an empty schema (everything dyn).
// Kinds of other resolvers are not found.
func NewCRDResolver(crds ...*unstructured.Unstructured) (SchemaResolver, error) {
	r := &crdResolver{schemas: map[schema.GroupVersionKind]*spec.Schema{}}
	meta, err := builtinObjectMeta()
	if err != nil {
		return nil, err
	}
	for _, u := range crds {
		crd, err := builtin.CRDFromUnstructured(u)
		if err != nil {
			return nil, err
		}
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for i, item := range versions {
			v, _ := item.(map[string]any)
			name, _ := v["name"].(string)
			if served, _ := v["served"].(bool); !served || name == "" {
				continue
			}
			s := new(spec.Schema)
			if raw, found, _ := unstructured.NestedFieldNoCopy(v, "schema", "openAPIV3Schema"); found {
				data, err := json.Marshal(raw)
				if err != nil {
					return nil, fmt.Errorf("CustomResourceDefinition %q: spec.versions[%d].schema.openAPIV3Schema: %w", u.GetName(), i, err)
				}
				if err := json.Unmarshal(data, s); err != nil {
					return nil, fmt.Errorf("CustomResourceDefinition %q: spec.versions[%d].schema.openAPIV3Schema: %w", u.GetName(), i, err)
				}
				publish(s, meta)
			}
			r.schemas[schema.GroupVersionKind{Group: crd.Group, Version: name, Kind: crd.Kind}] = s
		}
	}
	return r, nil
}

// publish adds the type and object metadata properties the API server's
// published OpenAPI gives every custom resource.
func publish(s *spec.Schema, meta *spec.Schema) {
	props := make(map[string]spec.Schema, len(s.Properties)+3)
	for k, v := range s.Properties {
		props[k] = v
	}
	props["apiVersion"] = *spec.StringProperty()
	props["kind"] = *spec.StringProperty()
	props["metadata"] = *meta
	s.Properties = props
}

// builtinObjectMeta returns ObjectMeta from the embedded definitions, refs
// inlined.
func builtinObjectMeta() (*spec.Schema, error) {
	d, err := builtinDefinitions()
	if err != nil {
		return nil, err
	}
	return populateRefs(d.lookup(), objectMetaDefinition)
}

// ResolveSchema implements [SchemaResolver].
func (r *crdResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	s, ok := r.schemas[gvk]
	if !ok {
		return nil, fmt.Errorf("cannot resolve %v: %w", gvk, ErrSchemaNotFound)
	}
	c := *s
	return &c, nil
}

// MapResolver is an in-memory [SchemaResolver], handy for tests and for
// schemas obtained elsewhere (for example from a cluster's /openapi/v3).
// Schemas must have their $refs inlined.
type MapResolver map[schema.GroupVersionKind]*spec.Schema

// ResolveSchema implements [SchemaResolver].
func (m MapResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	s, ok := m[gvk]
	if !ok || s == nil {
		return nil, fmt.Errorf("cannot resolve %v: %w", gvk, ErrSchemaNotFound)
	}
	return s, nil
}
