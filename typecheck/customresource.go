package typecheck

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/operation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/builtin/objectmeta"
	"github.com/vapkit/vapkit/internal/mutation"
)

// CustomResourceValidator checks custom resources against the
// openAPIV3Schema of their CustomResourceDefinition, as the API server does
// before it stores a custom resource (apiextensions-apiserver v0.37.2,
// pkg/registry/customresource validator and pkg/apiserver/validation): the
// object's apiVersion and kind, then its content as the server decodes
// it (unknown fields pruned, non-nullable nulls without a default dropped,
// the schema's defaults applied), against the schema by
// kube-openapi's validator with the formats the server supports. The errors
// are the server's, followed by those of the uniqueness of
// x-kubernetes-list-type set and map items: same field paths, same
// messages, sorted by field path
// (the server's order varies from one request to the next).
//
// On create, the object's metadata is checked too (apimachinery's
// ValidateObjectMetaDeclaratively, as the server calls it: name a DNS
// subdomain, namespace required for namespaced kinds (dropped, as the
// server drops it, for cluster-scoped ones), labels, annotations, finalizers, owner references...), after
// a name is generated from generateName as the server would. The caller
// sets the namespace the request gives.
//
// Not checked (an object refused only for these still passes): the
// x-kubernetes-validations CEL rules, metadata on update (immutable
// fields), embedded resources' metadata, and the scale subresource's
// replicas paths. Unknown fields are not refused: the server
// prunes them, unless the schema preserves them. Updates are checked with
// the server's ratcheting by [CustomResourceValidator.ValidateUpdate].
//
// A CustomResourceValidator is immutable and safe for concurrent use.
type CustomResourceValidator struct {
	kinds map[schema.GroupVersionKind]*crVersion
}

// crVersion is one served version of a CRD.
type crVersion struct {
	// raw is the version's openAPIV3Schema as written; nil when it has none.
	raw        map[string]any
	namespaced bool
	schema     *spec.Schema
	validator  *validate.SchemaValidator
}

// NewCustomResourceValidator returns a validator for the served versions of
// crds (apiextensions.k8s.io/v1 CustomResourceDefinition objects). Errors
// name the CRD and the schema's field path.
func NewCustomResourceValidator(crds ...*unstructured.Unstructured) (*CustomResourceValidator, error) {
	v := &CustomResourceValidator{kinds: map[schema.GroupVersionKind]*crVersion{}}
	for _, u := range crds {
		crd, err := builtin.CRDFromUnstructured(u)
		if err != nil {
			return nil, err
		}
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for i, item := range versions {
			vm, _ := item.(map[string]any)
			name, _ := vm["name"].(string)
			if served, _ := vm["served"].(bool); !served || name == "" {
				continue
			}
			cv := &crVersion{namespaced: crd.Namespaced}
			s := new(spec.Schema)
			if raw, found, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema"); found {
				cv.raw = raw
				data, err := json.Marshal(serverSchema(raw))
				if err == nil {
					err = json.Unmarshal(data, s)
				}
				wholeEnums(s)
				if err != nil {
					return nil, fmt.Errorf("CustomResourceDefinition %q: spec.versions[%d].schema.openAPIV3Schema: %w", u.GetName(), i, err)
				}
			}
			cv.schema = s
			cv.validator = validate.NewSchemaValidator(s, nil, "", strfmt.Default)
			v.kinds[schema.GroupVersionKind{Group: crd.Group, Version: name, Kind: crd.Kind}] = cv
		}
	}
	return v, nil
}

// Knows reports whether gvk is a served version of one of the validator's
// CRDs.
func (v *CustomResourceValidator) Knows(gvk schema.GroupVersionKind) bool {
	return v != nil && v.kinds[gvk] != nil
}

// Namespaced reports whether gvk is a served version of a namespaced
// custom kind of the validator's CRDs.
func (v *CustomResourceValidator) Namespaced(gvk schema.GroupVersionKind) bool {
	return v.Knows(gvk) && v.kinds[gvk].namespaced
}

// Validate returns the errors the API server reports when obj is created:
// nil when obj is valid or its kind is not one of the CRDs' (see
// [CustomResourceValidator.Knows]). obj is not modified.
func (v *CustomResourceValidator) Validate(obj *unstructured.Unstructured) field.ErrorList {
	if v == nil || obj == nil {
		return nil
	}
	gvk := obj.GroupVersionKind()
	cv := v.kinds[gvk]
	if cv == nil {
		return nil
	}
	content := cv.defaulted(obj)
	errs := metadataErrors(obj, cv.namespaced)
	errs = append(errs, resultErrors(cv.validator.Validate(content))...)
	return sortErrors(append(errs, listErrors(nil, cv.schema, content)...))
}

// Decode returns obj as the API server holds it once it has decoded it:
// unknown fields pruned (unless the schema preserves them), non-nullable
// nulls without a default dropped and the schema's defaults applied, so
// that admission policies see what they see in a cluster. obj comes back
// as it is when its kind is not one of the CRDs' (see
// [CustomResourceValidator.Knows]); it is never modified.
func (v *CustomResourceValidator) Decode(obj *unstructured.Unstructured) *unstructured.Unstructured {
	if v == nil || obj == nil {
		return obj
	}
	cv := v.kinds[obj.GroupVersionKind()]
	if cv == nil {
		return obj
	}
	return &unstructured.Unstructured{Object: cv.defaulted(obj)}
}

// defaulted returns obj's content as the server decodes it: pruned, then
// with the schema's defaults applied; obj is not modified.
func (cv *crVersion) defaulted(obj *unstructured.Unstructured) map[string]any {
	content := runtime.DeepCopyJSON(obj.UnstructuredContent())
	prune(content, cv.schema)
	if cv.raw != nil {
		mutation.ApplySchemaDefaults(cv.raw, content)
	}
	return content
}

// metadataErrors returns the server's errors for obj's metadata on
// create. A missing name with a generateName gets a generated one first,
// as the server generates it before validation (the random suffix is
// five characters the name rules accept).
func metadataErrors(obj *unstructured.Unstructured, namespaced bool) field.ErrorList {
	meta, errs := objectmeta.Prepared(obj, namespaced)
	if errs != nil {
		return errs
	}
	return apivalidation.ValidateObjectMetaDeclaratively(context.Background(), operation.Create, meta, nil, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"), true)
}

// sortErrors sorts errs by field path: kube-openapi walks properties in
// map order, so the server's order varies from call to call.
func sortErrors(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// resultErrors converts kube-openapi's result into the field errors the
// API server reports for it (kubeOpenAPIResultToFieldErrors).
func resultErrors(res *validate.Result) field.ErrorList {
	if res == nil || res.IsValid() {
		return nil
	}
	var errs field.ErrorList
	for _, e := range res.Errors {
		ve, ok := e.(*openapierrors.Validation)
		if !ok {
			errs = append(errs, field.Invalid(nil, "", e.Error()))
			continue
		}
		var path *field.Path
		if ve.Name != "" && ve.Name != "." {
			path = path.Child(strings.TrimPrefix(ve.Name, "."))
		}
		value := ve.Value
		if value == nil {
			value = ""
		}
		switch ve.Code() {
		case openapierrors.RequiredFailCode:
			errs = append(errs, field.Required(path, ""))
		case openapierrors.EnumFailCode:
			allowed := make([]string, 0, len(ve.Values))
			for _, a := range ve.Values {
				if s, ok := a.(string); ok {
					allowed = append(allowed, s)
					continue
				}
				b, _ := json.Marshal(a)
				allowed = append(allowed, string(b))
			}
			errs = append(errs, field.NotSupported(path, ve.Value, allowed))
		case openapierrors.TooLongFailCode:
			errs = append(errs, field.TooLong(path, "", int(int64Or(ve.Valid))))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			errs = append(errs, field.TooMany(path, int(int64Or(ve.Value)), int(int64Or(ve.Valid))))
		case openapierrors.InvalidTypeCode:
			errs = append(errs, field.TypeInvalid(path, value, ve.Error()))
		default:
			errs = append(errs, field.Invalid(path, value, ve.Error()))
		}
	}
	return errs
}

// wholeEnums makes the whole numbers of every enum under s int64, as
// the API server decodes a CRD's JSON (k8s.io/apimachinery's util/json);
// kube-openapi compares an enum value after converting the object's value
// to its type, so int64 and float64 values match differently.
func wholeEnums(s *spec.Schema) {
	if s == nil {
		return
	}
	for i, e := range s.Enum {
		s.Enum[i] = wholeJSON(e)
	}
	for _, m := range []map[string]spec.Schema{s.Properties, s.PatternProperties, s.Definitions} {
		for k, p := range m {
			wholeEnums(&p)
			m[k] = p
		}
	}
	for _, l := range [][]spec.Schema{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range l {
			wholeEnums(&l[i])
		}
	}
	wholeEnums(s.Not)
	if s.AdditionalProperties != nil {
		wholeEnums(s.AdditionalProperties.Schema)
	}
	if s.AdditionalItems != nil {
		wholeEnums(s.AdditionalItems.Schema)
	}
	if s.Items != nil {
		wholeEnums(s.Items.Schema)
		for i := range s.Items.Schemas {
			wholeEnums(&s.Items.Schemas[i])
		}
	}
	for k, d := range s.Dependencies {
		wholeEnums(d.Schema)
		s.Dependencies[k] = d
	}
}

// wholeJSON returns x with its whole float64 numbers (those JSON writes
// without a fraction or exponent) as int64.
func wholeJSON(x any) any {
	switch v := x.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e21 && v >= math.MinInt64 && v < math.MaxInt64 {
			return int64(v)
		}
	case []any:
		for i, e := range v {
			v[i] = wholeJSON(e)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = wholeJSON(e)
		}
	}
	return x
}

// int64Or returns x when it is an int64, else -1.
func int64Or(x any) int64 {
	if i, ok := x.(int64); ok {
		return i
	}
	return -1
}

// serverFormats are the string formats the API server keeps in CRD
// schemas (apiextensions-apiserver's supported formats at its default
// compatibility version, 1.36), with dashes removed as kube-openapi
// normalizes format names. Others are dropped before validation.
var serverFormats = []string{
	"bsonobjectid", "byte", "cidr", "creditcard", "date", "datetime", "duration", "email",
	"hexcolor", "hostname", "ipv4", "ipv6", "isbn", "isbn10", "isbn13", "k8slongname",
	"k8sshortname", "mac", "password", "rgbcolor", "ssn", "uri", "uuid", "uuid3", "uuid4", "uuid5",
}

// serverSchema returns a copy of a CRD schema node as the API server
// validates with it: x-kubernetes-int-or-string becomes the type
// [integer, string] and formats the server does not support are dropped,
// in every nested schema.
func serverSchema(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, x := range s {
		out[k] = x
	}
	if ios, _ := s["x-kubernetes-int-or-string"].(bool); ios {
		out["type"] = []any{"integer", "string"}
	}
	if f, ok := out["format"].(string); ok && f != "" && !keepFormat(out["type"], f) {
		delete(out, "format")
	}
	for _, k := range []string{"properties", "patternProperties", "definitions"} {
		if m, ok := s[k].(map[string]any); ok {
			c := make(map[string]any, len(m))
			for name, x := range m {
				c[name] = schemaOf(x)
			}
			out[k] = c
		}
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		if l, ok := s[k].([]any); ok {
			c := make([]any, len(l))
			for i, x := range l {
				c[i] = schemaOf(x)
			}
			out[k] = c
		}
	}
	for _, k := range []string{"not", "additionalProperties", "additionalItems", "items"} {
		switch x := s[k].(type) {
		case map[string]any:
			out[k] = serverSchema(x)
		case []any:
			c := make([]any, len(x))
			for i, e := range x {
				c[i] = schemaOf(e)
			}
			out[k] = c
		}
	}
	if deps, ok := s["dependencies"].(map[string]any); ok {
		c := make(map[string]any, len(deps))
		for name, x := range deps {
			c[name] = schemaOf(x)
		}
		out["dependencies"] = c
	}
	return out
}

// schemaOf converts x when it is a schema node.
func schemaOf(x any) any {
	if m, ok := x.(map[string]any); ok {
		return serverSchema(m)
	}
	return x
}

// keepFormat reports whether the server keeps format f on a schema of type
// t (the value of "type": a string, or a list after int-or-string).
func keepFormat(t any, f string) bool {
	typ, _ := t.(string)
	if l, ok := t.([]any); ok && len(l) == 1 {
		typ, _ = l[0].(string)
	}
	switch typ {
	case "", "string":
		return slices.Contains(serverFormats, strings.ReplaceAll(f, "-", ""))
	case "integer":
		return f == "int32" || f == "int64"
	case "number":
		return f == "float" || f == "double"
	}
	return false
}
