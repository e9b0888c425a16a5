package mutation

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// smdGz is the structured-merge-diff schema of every k8s.io/api v0.37.2
// kind, converted from kube-openapi's generated definitions by
// internal/gen: gzip-compressed YAML, in base64 lines.
//
//go:embed smd.yaml.gz.b64
var smdGz string

// TypeConverter types objects of the kinds it knows with their
// structured-merge-diff schema, as the API server's type converters
// (managedfields.NewTypeConverter over a group-version's OpenAPI document)
// do. It is immutable and safe for concurrent use.
type TypeConverter struct {
	parser        *typed.Parser
	kinds         map[schema.GroupVersionKind]string
	groupVersions map[schema.GroupVersion]bool
	// defaults are the CRD kinds whose schemas hold defaults.
	defaults map[schema.GroupVersionKind]*defaulter
}

// index fills groupVersions from kinds.
func (c *TypeConverter) index() *TypeConverter {
	c.groupVersions = make(map[schema.GroupVersion]bool, len(c.kinds)/4)
	for gvk := range c.kinds {
		c.groupVersions[gvk.GroupVersion()] = true
	}
	return c
}

// ErrNoCorrespondingType is the error of ObjectToTyped for a kind the
// converter does not know, worded as managedfields words it.
type noCorrespondingTypeError struct{ gvk schema.GroupVersionKind }

func (e *noCorrespondingTypeError) Error() string {
	return fmt.Sprintf("no corresponding type for %v", e.gvk)
}

// ObjectToTyped types obj by the schema of its kind. Typed Go objects are
// read through reflection, unstructured ones as maps, as upstream.
func (c *TypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	name, ok := c.kinds[gvk]
	if !ok {
		return nil, &noCorrespondingTypeError{gvk: gvk}
	}
	t := c.parser.Type(name)
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return t.FromUnstructured(u.UnstructuredContent(), opts...)
	}
	return t.FromStructured(obj, opts...)
}

// KnowsGroupVersion reports whether c has schemas for gv, as the API
// server's converter manager knows the group-versions of its OpenAPI
// document: a kind missing from a known group-version is "no corresponding
// type" when typed, a group-version missing altogether is a 503 upstream.
func (c *TypeConverter) KnowsGroupVersion(gv schema.GroupVersion) bool {
	_, ok := c.groupVersions[gv]
	return ok
}

// builtinFile is the layout of smd.yaml.gz.
type builtinFile struct {
	Kinds []struct {
		Group   string `yaml:"group,omitempty"`
		Version string `yaml:"version"`
		Kind    string `yaml:"kind"`
		Type    string `yaml:"type"`
	} `yaml:"kinds"`
	// Schema holds smdschema.Schema's one field: the Schema type itself
	// carries a lock and must not be copied.
	Schema struct {
		Types []smdschema.TypeDef `yaml:"types"`
	} `yaml:"schema"`
}

// builtinSchema decodes the embedded schema once.
var builtinSchema = sync.OnceValues(func() (*builtinFile, error) {
	gz, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(smdGz, "\n", ""))
	if err != nil {
		return nil, fmt.Errorf("reading embedded schemas: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("reading embedded schemas: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("reading embedded schemas: %w", err)
	}
	f := new(builtinFile)
	if err := yaml.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("decoding embedded schemas: %w", err)
	}
	return f, nil
})

// builtinConverter is built once from builtinSchema.
var builtinConverter = sync.OnceValues(func() (*TypeConverter, error) {
	f, err := builtinSchema()
	if err != nil {
		return nil, err
	}
	c := &TypeConverter{parser: &typed.Parser{Schema: smdschema.Schema{Types: f.Schema.Types}}, kinds: make(map[schema.GroupVersionKind]string, len(f.Kinds))}
	for _, k := range f.Kinds {
		c.kinds[schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}] = k.Type
	}
	return c.index(), nil
})

// Builtin returns the converter of every built-in kind of k8s.io/api
// v0.37.2. The embedded schema is decoded on the first call.
func Builtin() (*TypeConverter, error) { return builtinConverter() }

// liveValue types obj, the object a patch merges into, as
// ObjectToTyped(obj, typed.AllowDuplicates) does, with the same verdict.
// Where [validates] proves the object valid, the library's validation is
// skipped; a typed object is then read once into unstructured data (by a
// viewer reusing prior's equal parts), which the merge reads instead of
// the struct (owned is true: that data belongs to the caller, see
// mergeTouched). Otherwise, and for every error, the library types the
// object itself.
func (c *TypeConverter) liveValue(sc *scratch, obj runtime.Object, prior map[string]any) (tv *typed.TypedValue, owned bool, err error) {
	if name, ok := c.kinds[obj.GetObjectKind().GroupVersionKind()]; ok {
		t := c.parser.Type(name)
		if u, ok := obj.(*unstructured.Unstructured); ok {
			content := u.UnstructuredContent()
			if validates(t.Schema, t.TypeRef, content, false) {
				//nolint:staticcheck // validates proved what AsTyped checks.
				return typed.AsTypedUnvalidated(value.NewValueInterface(content), t.Schema, t.TypeRef), false, nil
			}
		} else if rv, err := value.NewValueReflect(obj); err == nil {
			view, _ := sc.viewer.read(rv, priorData(prior))
			if validates(t.Schema, t.TypeRef, view, false) {
				//nolint:staticcheck // validates proved what AsTyped checks.
				return typed.AsTypedUnvalidated(value.NewValueInterface(view), t.Schema, t.TypeRef), true, nil
			}
		}
	}
	tv, err = c.ObjectToTyped(obj, typed.AllowDuplicates)
	return tv, false, err
}

// priorData is prior as data for a viewer: a nil map is no prior at all.
func priorData(prior map[string]any) any {
	if prior == nil {
		return nil
	}
	return prior
}

// patchValue types an apply configuration's patch as ObjectToTyped(patch)
// does, with the same verdict, skipping the library's validation where
// [validates] (duplicates not allowed) proves it would find nothing.
func (c *TypeConverter) patchValue(patch *unstructured.Unstructured) (*typed.TypedValue, error) {
	if name, ok := c.kinds[patch.GroupVersionKind()]; ok {
		t := c.parser.Type(name)
		content := patch.UnstructuredContent()
		if validates(t.Schema, t.TypeRef, content, true) {
			//nolint:staticcheck // validates proved what AsTyped checks.
			return typed.AsTypedUnvalidated(value.NewValueInterface(content), t.Schema, t.TypeRef), nil
		}
	}
	return c.ObjectToTyped(patch)
}
