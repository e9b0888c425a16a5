// Package patchtypes holds the CEL types that MutatingAdmissionPolicy
// mutations build: `Object` and its nested `Object.<path>` types, `JSONPatch`,
// and the `jsonpatch.escapeKey` function.
//
// It behaves as k8s.io/apiserver v0.37.2 pkg/cel/mutation (the type resolver,
// the JSONPatch type), pkg/cel/mutation/dynamic (Object values) and
// pkg/cel/library/jsonpatch.go (escapeKey) do, with one deliberate
// difference: where upstream reports several type-name mismatches in Go map
// order, this package reports them sorted by field name, so that messages are
// deterministic.
//
// The package has no state; every value is immutable once built.
package patchtypes

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"google.golang.org/protobuf/types/known/structpb"
)

// Type names of the mutation environment.
const (
	// ObjectTypeName is the root of the dynamic object types: `Object`,
	// `Object.spec`, `Object.spec.template` and so on.
	ObjectTypeName = "Object"
	// JSONPatchTypeName names one JSON Patch operation.
	JSONPatchTypeName = "JSONPatch"
)

var (
	// ObjectType is the type an ApplyConfiguration expression must have.
	ObjectType = cel.ObjectType(ObjectTypeName)
	// JSONPatchType is the type of one JSON Patch operation.
	JSONPatchType = cel.ObjectType(JSONPatchTypeName)
	// JSONPatchListType is the type a JSONPatch expression must have.
	JSONPatchListType = cel.ListType(JSONPatchType)
)

// EnvOption declares the mutation types over the environment's current type
// provider and the `jsonpatch.escapeKey` function. The API server adds both
// to every compatibility version (they are introduced at 1.0).
func EnvOption() cel.EnvOption {
	return func(e *cel.Env) (*cel.Env, error) {
		p := &provider{base: e.CELTypeProvider()}
		e, err := cel.CustomTypeProvider(p)(e)
		if err != nil {
			return nil, err
		}
		return cel.Function("jsonpatch.escapeKey",
			cel.Overload("string_jsonpatch_escapeKey_string", []*cel.Type{cel.StringType}, cel.StringType,
				cel.UnaryBinding(escapeKeyVal)))(e)
	}
}

// keyReplacer escapes a JSON Pointer reference token (RFC 6901): "~" becomes
// "~0" and "/" becomes "~1", in one pass, so "~1" becomes "~01".
var keyReplacer = strings.NewReplacer("/", "~1", "~", "~0")

// EscapeKey escapes k for use as one segment of a JSON Patch path, as
// `jsonpatch.escapeKey` does.
func EscapeKey(k string) string { return keyReplacer.Replace(k) }

func escapeKeyVal(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return types.String(EscapeKey(s))
}

// provider resolves `Object`, `Object.<path>` and `JSONPatch` before
// delegating to the environment's own provider.
type provider struct {
	base types.Provider
}

var _ types.Provider = (*provider)(nil)

// resolve reports whether name is one of the mutation types; object says
// which kind.
func resolve(name string) (known, object bool) {
	if name == JSONPatchTypeName {
		return true, false
	}
	if name == ObjectTypeName || strings.HasPrefix(name, ObjectTypeName+".") {
		return true, true
	}
	return false, false
}

func (p *provider) EnumValue(name string) ref.Val { return p.base.EnumValue(name) }

func (p *provider) FindIdent(name string) (ref.Val, bool) { return p.base.FindIdent(name) }

func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if known, _ := resolve(name); known {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.base.FindStructType(name)
}

func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	known, object := resolve(name)
	switch {
	case !known:
		return p.base.FindStructFieldNames(name)
	case object:
		// Any field name is accepted, so none is reported as missing.
		return nil, true
	}
	return []string{"op", "from", "path", "value"}, true
}

func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	known, object := resolve(name)
	switch {
	case !known:
		return p.base.FindStructFieldType(name, field)
	case object:
		return objectField(field), true
	}
	switch field {
	case "op", "from", "path":
		return &types.FieldType{Type: types.StringType}, true
	case "value":
		return &types.FieldType{Type: types.DynType}, true
	}
	// Upstream declares every other field without a type.
	return &types.FieldType{}, true
}

func (p *provider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	known, object := resolve(name)
	switch {
	case !known:
		return p.base.NewValue(name, fields)
	case object:
		return &ObjectVal{typ: types.NewObjectType(name), fields: fields}
	}
	return newJSONPatch(fields)
}

// objectField is the declaration of every field of an Object type: dyn, read
// from the value's native map form.
func objectField(name string) *types.FieldType {
	return &types.FieldType{
		Type: types.DynType,
		IsSet: func(target any) bool {
			m, ok := target.(map[string]any)
			if !ok {
				return false
			}
			_, set := m[name]
			return set
		},
		GetFrom: func(target any) (any, error) {
			if m, ok := target.(map[string]any); ok {
				return m[name], nil
			}
			return nil, fmt.Errorf("cannot get field %q", name)
		},
	}
}

// ObjectVal is a value of an `Object…` type: a type name and the fields the
// expression set.
type ObjectVal struct {
	typ    *types.Type
	fields map[string]ref.Val
}

var (
	_ ref.Val       = (*ObjectVal)(nil)
	_ traits.Zeroer = (*ObjectVal)(nil)
)

// TypeName returns the value's type name, such as "Object.spec".
func (v *ObjectVal) TypeName() string { return v.typ.TypeName() }

// Native returns the value as JSON-like Go data: nested objects become maps,
// lists and maps are converted as upstream converts them (elements of list
// literals keep their own native form).
func (v *ObjectVal) Native() (map[string]any, error) {
	out := make(map[string]any, len(v.fields))
	for k, f := range v.fields {
		c, err := convertField(f)
		if err != nil {
			// The first failing field in name order is reported.
			return nil, v.firstFieldError()
		}
		out[k] = c
	}
	return out, nil
}

// firstFieldError is the conversion error of the first field, in name
// order, that does not convert.
func (v *ObjectVal) firstFieldError() error {
	for _, k := range sortedKeys(v.fields) {
		if _, err := convertField(v.fields[k]); err != nil {
			return fmt.Errorf("fail to convert field %q: %w", k, err)
		}
	}
	return nil
}

// ConvertToNative converts to map[string]any, *structpb.Struct or
// *structpb.Value.
func (v *ObjectVal) ConvertToNative(t reflect.Type) (any, error) {
	m, err := v.Native()
	if err != nil {
		return nil, err
	}
	switch t {
	case reflect.TypeFor[map[string]any]():
		return m, nil
	case reflect.TypeFor[*structpb.Struct]():
		return structpb.NewStruct(m)
	case reflect.TypeFor[*structpb.Value]():
		return structpb.NewValue(m)
	}
	return nil, fmt.Errorf("unable to convert to %v", t)
}

// ConvertToType converts to the value's own type or to `type`.
func (v *ObjectVal) ConvertToType(t ref.Type) ref.Val {
	if v.typ.TypeName() == t.TypeName() {
		return v
	}
	if t == types.TypeType {
		return types.NewTypeTypeWithParam(v.typ)
	}
	return types.NewErr("unsupported conversion into %v", t)
}

// Equal is true for values of the same type name whose fields are deeply
// equal.
func (v *ObjectVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(*ObjectVal)
	if !ok || v.typ.Equal(o.typ) != types.True {
		return types.False
	}
	return types.Bool(reflect.DeepEqual(v.fields, o.fields))
}

// Type returns the value's object type.
func (v *ObjectVal) Type() ref.Type { return types.NewObjectType(v.typ.TypeName()) }

// Value returns the native map, or an error value when a field does not
// convert.
func (v *ObjectVal) Value() any {
	m, err := v.Native()
	if err != nil {
		return types.WrapErr(err)
	}
	return m
}

// IsZeroValue reports whether no field is set.
func (v *ObjectVal) IsZeroValue() bool { return len(v.fields) == 0 }

// CheckTypeNames checks that every nested Object value is named after its
// field path from v (elements of lists and values of maps carry their
// field's path). The errors are sorted by field path.
func (v *ObjectVal) CheckTypeNames() error {
	var buf [16]string
	if namesOK(v, append(buf[:0], v.typ.TypeName())) {
		return nil
	}
	return errors.Join(checkNames(v, []string{v.typ.TypeName()})...)
}

// namesOK reports whether checkNames finds nothing, visiting the same
// values in any order and without joining paths.
func namesOK(v ref.Val, path []string) bool {
	if ov, ok := v.(*ObjectVal); ok {
		if !pathNamed(ov.typ.TypeName(), path) {
			return false
		}
		for k, f := range ov.fields {
			if !namesOK(f, append(path, k)) {
				return false
			}
		}
	}
	if !mayHoldObjects(v) {
		return true
	}
	switch n := v.Value().(type) {
	case []ref.Val:
		for _, e := range n {
			if !namesOK(e, path) {
				return false
			}
		}
	case map[ref.Val]ref.Val:
		for _, e := range n {
			if !namesOK(e, path) {
				return false
			}
		}
	}
	return true
}

// pathNamed reports whether name is the elements of path joined by dots.
func pathNamed(name string, path []string) bool {
	for i, p := range path {
		if i > 0 {
			if name == "" || name[0] != '.' {
				return false
			}
			name = name[1:]
		}
		if !strings.HasPrefix(name, p) {
			return false
		}
		name = name[len(p):]
	}
	return name == ""
}

func checkNames(v ref.Val, path []string) []error {
	var errs []error
	if ov, ok := v.(*ObjectVal); ok {
		want := strings.Join(path, ".")
		if got := ov.typ.TypeName(); got != want {
			errs = append(errs, fmt.Errorf("unexpected type name %q, expected %q, which matches field name path from root Object type", got, want))
		}
		for _, k := range sortedKeys(ov.fields) {
			errs = append(errs, checkNames(ov.fields[k], append(slices.Clip(path), k))...)
		}
	}
	if !mayHoldObjects(v) {
		return errs
	}
	switch n := v.Value().(type) {
	case []ref.Val:
		for _, e := range n {
			errs = append(errs, checkNames(e, path)...)
		}
	case map[ref.Val]ref.Val:
		// Map literal values in key order, for deterministic messages.
		keys := make([]ref.Val, 0, len(n))
		for k := range n {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b ref.Val) int { return strings.Compare(fmt.Sprint(a.Value()), fmt.Sprint(b.Value())) })
		for _, k := range keys {
			errs = append(errs, checkNames(n[k], path)...)
		}
	}
	return errs
}

// mayHoldObjects is false for the values whose Value is neither a list nor
// a map of CEL values: Object values (a native map, converted at some
// cost) and scalars.
func mayHoldObjects(v ref.Val) bool {
	switch v.(type) {
	case *ObjectVal, types.String, types.Int, types.Uint, types.Double, types.Bool, types.Null, types.Bytes:
		return false
	}
	return true
}

// convertField converts one field value of an Object as upstream does:
// list and map literals convert their elements shallowly (each element's
// Value()), other lists and maps recursively, scalars to their Go value.
func convertField(v ref.Val) (any, error) {
	switch n := v.Value().(type) {
	case []ref.Val:
		var out []any
		if len(n) > 0 {
			out = make([]any, 0, len(n))
		}
		for _, e := range n {
			out = append(out, e.Value())
		}
		return out, nil
	case map[ref.Val]ref.Val:
		out := make(map[string]any, len(n))
		for k, e := range n {
			s, ok := k.Value().(string)
			if !ok {
				return nil, fmt.Errorf("map key %q is of type %T, not string", k, k)
			}
			out[s] = e.Value()
		}
		return out, nil
	}
	if l, ok := v.(traits.Lister); ok {
		var out []any
		for it := l.Iterator(); it.HasNext() == types.True; {
			c, err := convertField(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	// A nested Object is not a Mapper: it falls through to its Value, which
	// carries a conversion failure as an error value inside the result, as
	// upstream's does (structured-merge-diff rejects it later).
	if m, ok := v.(traits.Mapper); ok {
		out := make(map[string]any)
		for it := m.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			s, ok := k.Value().(string)
			if !ok {
				return nil, fmt.Errorf("map key %q is of type %T, not string", k, k)
			}
			c, err := convertField(m.Get(k))
			if err != nil {
				return nil, err
			}
			out[s] = c
		}
		return out, nil
	}
	return v.Value(), nil
}

func sortedKeys(m map[string]ref.Val) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// JSONPatchVal is one JSON Patch operation built by an expression. No field
// is validated when it is built: the patch application reports problems.
type JSONPatchVal struct {
	Op, From, Path string
	// Val is the operation's value; nil when the expression set none.
	Val ref.Val
}

var _ ref.Val = (*JSONPatchVal)(nil)

func newJSONPatch(fields map[string]ref.Val) ref.Val {
	p := &JSONPatchVal{}
	// Sorted, so that the first bad field reported is always the same.
	for _, name := range sortedKeys(fields) {
		v := fields[name]
		var dst *string
		switch name {
		case "op":
			dst = &p.Op
		case "path":
			dst = &p.Path
		case "from":
			dst = &p.From
		case "value":
			p.Val = v
			continue
		default:
			return types.NewErr("unexpected JSONPatchType field: %s", name)
		}
		s, ok := v.Value().(string)
		if !ok {
			return types.NewErr("unexpected type %T for JSONPatchType '%s' field", v.Value(), name)
		}
		*dst = s
	}
	return p
}

// ConvertToNative converts to *JSONPatchVal only.
func (p *JSONPatchVal) ConvertToNative(t reflect.Type) (any, error) {
	if t == reflect.TypeFor[*JSONPatchVal]() {
		return p, nil
	}
	return nil, fmt.Errorf("cannot convert to native type: %v", t)
}

// ConvertToType converts to JSONPatch or `type`.
func (p *JSONPatchVal) ConvertToType(t ref.Type) ref.Val {
	if t.TypeName() == JSONPatchTypeName {
		return p
	}
	if t == types.TypeType {
		return types.NewTypeTypeWithParam(JSONPatchType)
	}
	return types.NewErr("unsupported type: %s", t.TypeName())
}

// Equal compares op, from, path and value.
func (p *JSONPatchVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(*JSONPatchVal)
	if !ok || p == nil || o == nil {
		return types.False
	}
	if p.Op != o.Op || p.From != o.From || p.Path != o.Path || (p.Val == nil) != (o.Val == nil) {
		return types.False
	}
	if p.Val == nil {
		return types.True
	}
	return p.Val.Equal(o.Val)
}

// Get returns a field: op, path and from as strings ("" when unset), value
// as set.
func (p *JSONPatchVal) Get(index ref.Val) ref.Val {
	if name, ok := index.Value().(string); ok {
		switch name {
		case "op":
			return types.String(p.Op)
		case "path":
			return types.String(p.Path)
		case "from":
			return types.String(p.From)
		case "value":
			return p.Val
		}
	}
	return types.NewErr("unsupported indexer: %s", index)
}

// IsSet reports a field as set when it is a non-empty string or a value.
func (p *JSONPatchVal) IsSet(field ref.Val) ref.Val {
	if name, ok := field.Value().(string); ok {
		switch name {
		case "op":
			return types.Bool(p.Op != "")
		case "path":
			return types.Bool(p.Path != "")
		case "from":
			return types.Bool(p.From != "")
		case "value":
			return types.Bool(p.Val != nil)
		}
	}
	return types.NewErr("unsupported field: %s", field)
}

// Type returns JSONPatch.
func (p *JSONPatchVal) Type() ref.Type { return JSONPatchType }

// Value returns p.
func (p *JSONPatchVal) Value() any { return p }
