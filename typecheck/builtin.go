package typecheck

//go:generate go run -tags vapkit_gen ./internal/gen -o schemas.json.gz -extra-o schemas_extra.json

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// schemasGz holds the OpenAPI definitions of every k8s.io/api v0.37.2 type
// (and the apimachinery types they use), as kube-openapi's openapi-gen
// generates them, stripped of documentation. See internal/gen.
//
//go:embed schemas.json.gz
var schemasGz []byte

// schemasExtra holds, in the same format, the definitions of
// apiextensions.k8s.io and apiregistration.k8s.io as
// k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator generate them,
// stripped the same way.
//
//go:embed schemas_extra.json
var schemasExtra []byte

// schemaFile is the format of both embedded files.
type schemaFile struct {
	Kinds []struct {
		Group, Version, Kind, Definition string
	} `json:"kinds"`
	Definitions map[string]json.RawMessage `json:"definitions"`
}

// definitions is the decoded form of schemasGz. Definitions stay raw JSON
// until a kind needs them.
type definitions struct {
	kinds map[schema.GroupVersionKind]string
	defs  map[string]json.RawMessage
}

// builtinDefinitions decodes the embedded file once; the result is never
// modified.
var builtinDefinitions = sync.OnceValues(func() (*definitions, error) {
	zr, err := gzip.NewReader(bytes.NewReader(schemasGz))
	if err != nil {
		return nil, fmt.Errorf("reading embedded schemas: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("reading embedded schemas: %w", err)
	}
	var f, extra schemaFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("decoding embedded schemas: %w", err)
	}
	if err := json.Unmarshal(schemasExtra, &extra); err != nil {
		return nil, fmt.Errorf("decoding embedded schemas_extra.json: %w", err)
	}
	d := &definitions{kinds: make(map[schema.GroupVersionKind]string, len(f.Kinds)+len(extra.Kinds)), defs: f.Definitions}
	for name, def := range extra.Definitions {
		d.defs[name] = def
	}
	for _, k := range append(f.Kinds, extra.Kinds...) {
		d.kinds[schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}] = k.Definition
	}
	return d, nil
})

// builtinResolver resolves built-in kinds from the embedded definitions.
type builtinResolver struct{}

// BuiltinResolver returns a [SchemaResolver] for every kind of k8s.io/api
// v0.37.2, apiextensions.k8s.io and apiregistration.k8s.io, backed by OpenAPI definitions generated with kube-openapi and
// embedded in the library, as the API server's definitions resolver sees
// them: $refs are inlined and circular references become `type: object`.
// It is safe for concurrent use.
func BuiltinResolver() SchemaResolver { return builtinResolver{} }

// ResolveSchema implements [SchemaResolver].
func (builtinResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	d, err := builtinDefinitions()
	if err != nil {
		return nil, err
	}
	name, ok := d.kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("cannot resolve %v: %w", gvk, ErrSchemaNotFound)
	}
	return populateRefs(d.lookup(), name)
}

// lookup returns a function that decodes definitions by name, each at most
// once. A definition that does not decode counts as missing.
func (d *definitions) lookup() func(string) (*spec.Schema, bool) {
	cache := map[string]*spec.Schema{}
	return func(ref string) (*spec.Schema, bool) {
		if s, ok := cache[ref]; ok {
			return s, true
		}
		raw, ok := d.defs[ref]
		if !ok {
			return nil, false
		}
		s := new(spec.Schema)
		if err := json.Unmarshal(raw, s); err != nil {
			return nil, false
		}
		cache[ref] = s
		return s, true
	}
}
