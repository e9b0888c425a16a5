package celvalue

import (
	"encoding/base64"
	"math"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// TypedValue returns obj, a Go value such as a pointer to a typed
// k8s.io/api struct, as the CEL value the API server evaluates against: the
// value cel-go builds from the map runtime.DefaultUnstructuredConverter
// returns for obj, with maps iterating in sorted key order. Unlike that
// map it is built lazily: a struct field, map entry or list element is
// converted the first time an expression reads it, so expressions that read
// a few fields of a large object do not pay for the whole object.
//
// Every CEL operation (selection, has(), in, size, iteration, equality,
// conversions) and every cost figure is the same as for the converted map.
// A conversion failure (a uint64 above math.MaxInt64, a failing custom
// marshaler) is an error value where the failing part is read rather than
// an error for the whole object.
//
// The value reads obj while expressions run and remembers what it read:
// obj must not change while the value is in use, and the value belongs to
// one goroutine (one evaluation batch at a time).
func TypedValue(obj any) ref.Val {
	return TypedObject(obj, nil)
}

// TypedObject is [TypedValue] for an object whose top-level map has the
// string fields in set added or replaced, such as the apiVersion and kind
// the API server sets on typed objects. set is ignored unless obj is a
// struct or a pointer to one. The value only reads set, which may be
// shared by many values but must not change while they are in use.
func TypedObject(obj any, set map[string]string) ref.Val {
	if obj == nil {
		return types.NullValue
	}
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Struct {
		// Make the struct addressable, as ToUnstructured's pointer input
		// is, so pointer-receiver converters apply.
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		v = p
	}
	if len(set) > 0 && v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct {
		if info := structInfoOf(v.Elem().Type()); !info.eager {
			s := &typedSetMap{typedMap: typedMap{v: v.Elem(), info: info, flags: mapWithSet}, set: set}
			return &s.typedMap
		}
	}
	return convertValue(v)
}

var stringMapType = reflect.TypeFor[map[string]string]()

// jsonAdapter turns the JSON-shaped results of custom converters into CEL
// values, as the environment's adapter does for converted objects.
func jsonAdapter() types.Adapter { return orderedAdapter{base: types.DefaultTypeAdapter} }

// convertValue converts v as the unstructured converter converts a value
// that is not a primitive-kinded struct field: custom converters first,
// then by kind.
func convertValue(v reflect.Value) ref.Val {
	if !v.IsValid() || (v.Kind() == reflect.Interface && v.IsNil()) {
		return types.NullValue
	}
	return infoOf(v.Type()).convert(v)
}

// convert is convertValue for v, a valid value of type p.t.
func (p *typeInfo) convert(v reflect.Value) ref.Val {
	if p.kind == reflect.Interface && v.IsNil() {
		return types.NullValue
	}
	if p.custom != nil {
		return p.convertCustom(v)
	}
	switch p.kind {
	case reflect.Pointer:
		if v.IsNil() {
			return types.NullValue
		}
		return p.elemInfo().convert(v.Elem())
	case reflect.Interface:
		return convertValue(v.Elem())
	case reflect.Map:
		if v.IsNil() {
			return types.NullValue
		}
		if p.t.Key().Kind() != reflect.String {
			return types.NewErr("cannot convert map to: %v", reflect.Interface)
		}
		m := &typedMap{v: v}
		if p.t == stringMapType {
			m.flags = mapOfStrings
		}
		return m
	case reflect.Slice:
		if v.IsNil() {
			return types.NullValue
		}
		if p.t.Elem().Kind() == reflect.Uint8 {
			return types.String(base64.StdEncoding.EncodeToString(v.Bytes()))
		}
		return &typedList{v: v}
	case reflect.Struct:
		if p.info.eager {
			return eagerStruct(v)
		}
		return &typedMap{v: v, info: p.info}
	}
	return primitiveValue(v)
}

// convertCustom runs the custom converter of p's type on v.
func (p *typeInfo) convertCustom(v reflect.Value) ref.Val {
	if p.t == quantityType && v.CanAddr() {
		// Quantity's converter is its String, on a copy (the
		// converter's receiver is a value): the same text without
		// boxing the value twice on the way.
		q := *(*resource.Quantity)(v.Addr().UnsafePointer())
		return types.String(q.String())
	}
	u, err := p.custom.ToUnstructured(v)
	if err != nil {
		return types.NewErr("%v", err)
	}
	switch u := u.(type) {
	case nil:
		return types.NullValue
	case string:
		// The common case (quantities, times, int-or-strings), as the
		// adapter converts it.
		return types.String(u)
	}
	return jsonAdapter().NativeToValue(u)
}

// primitiveValue converts a value of a primitive kind, ignoring custom
// converters, as the converter does for struct fields of those kinds.
func primitiveValue(v reflect.Value) ref.Val {
	switch v.Kind() {
	case reflect.String:
		if v.CanAddr() {
			return stringAt(v.Addr().UnsafePointer())
		}
		return types.String(v.String())
	case reflect.Bool:
		return types.Bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return types.Int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u := v.Uint()
		if u > math.MaxInt64 {
			return types.NewErr("unsigned value %d does not fit into int64 (overflow)", u)
		}
		return types.Int(int64(u))
	case reflect.Float32, reflect.Float64:
		return types.Double(v.Float())
	}
	return types.NewErr("unrecognized type: %v", v.Kind())
}

// fieldValue converts a struct field's value f; p is the typeInfo of the
// field's type.
func fieldValue(f reflect.Value, p *typeInfo) ref.Val {
	if p.primitive {
		return primitiveValue(f)
	}
	return p.convert(f)
}

// structValue converts a struct without a custom converter.
func structValue(v reflect.Value) ref.Val {
	info := structInfoOf(v.Type())
	if info.eager {
		return eagerStruct(v)
	}
	return &typedMap{v: v, info: info}
}

// eagerStruct converts a struct the lazy form does not model (unexported
// fields, inlined non-structs) with the unstructured converter itself.
func eagerStruct(v reflect.Value) ref.Val {
	p := v
	if v.CanAddr() {
		p = v.Addr()
	} else {
		p = reflect.New(v.Type())
		p.Elem().Set(v)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.Interface())
	if err != nil {
		return types.NewErr("%v", err)
	}
	return jsonAdapter().NativeToValue(m)
}
