// Semantic equality of objects on the mutation path, without the
// allocations of the reflective comparison.

package policy

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// semanticEqual is equality.Semantic.DeepEqual. It walks the two objects
// as that function does (its equality functions for quantities, times and
// selectors; nil and empty slices and maps alike) without boxing every
// scalar, copying every map entry or recording every struct it visits;
// what the walk cannot decide the same way (unexported fields, channels,
// objects nested deeper than maxEqualDepth) is decided by
// reflect.DeepEqual or equality.Semantic.DeepEqual, which semanticEqual
// was before. reflect.DeepEqual is not consulted first: objects equal
// field by field are semantically equal.
func semanticEqual(a, b runtime.Object) bool {
	if eq, ok := fastSemanticEqual(a, b); ok {
		return eq
	}
	return reflect.DeepEqual(a, b) || equality.Semantic.DeepEqual(a, b)
}

// maxEqualDepth bounds the walk of fastSemanticEqual. Objects are trees
// far shallower than this; a deeper one may hold a cycle, which the
// reflective comparison detects.
const maxEqualDepth = 200

var (
	quantityType  = reflect.TypeFor[resource.Quantity]()
	timeType      = reflect.TypeFor[metav1.Time]()
	microTimeType = reflect.TypeFor[metav1.MicroTime]()
	stringMapType = reflect.TypeFor[map[string]string]()
	anyMapType    = reflect.TypeFor[map[string]any]()
)

// fastSemanticEqual decides equality.Semantic.DeepEqual(a, b); ok is false
// when it cannot.
func fastSemanticEqual(a, b any) (eq, ok bool) {
	if a == nil || b == nil {
		return a == b, true
	}
	v1, v2 := reflect.ValueOf(a), reflect.ValueOf(b)
	if v1.Type() != v2.Type() {
		return false, true
	}
	return valuesEqual(v1, v2, 0)
}

// valuesEqual is the forked reflect package's deepValueEqual with
// equateNilAndEmpty, for acyclic values.
func valuesEqual(v1, v2 reflect.Value, depth int) (eq, ok bool) {
	if depth > maxEqualDepth {
		return false, false
	}
	if !v1.IsValid() || !v2.IsValid() {
		return v1.IsValid() == v2.IsValid(), true
	}
	t := v1.Type()
	if t != v2.Type() {
		return false, true
	}
	if fv, found := equality.Semantic.Equalities[t]; found {
		return specialEqual(fv, t, v1, v2), true
	}
	switch v1.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.Struct:
		// Values at the same address are equal (the reflective walk's
		// short circuit).
		if v1.CanAddr() && v2.CanAddr() && v1.UnsafeAddr() == v2.UnsafeAddr() {
			return true, true
		}
	}
	switch v1.Kind() {
	case reflect.Array:
		for i := range v1.Len() {
			if eq, ok := valuesEqual(v1.Index(i), v2.Index(i), depth+1); !eq || !ok {
				return eq, ok
			}
		}
		return true, true
	case reflect.Slice:
		return slicesEqual(v1, v2, depth)
	case reflect.Interface:
		if v1.IsNil() || v2.IsNil() {
			return v1.IsNil() == v2.IsNil(), true
		}
		return valuesEqual(v1.Elem(), v2.Elem(), depth+1)
	case reflect.Pointer:
		return valuesEqual(v1.Elem(), v2.Elem(), depth+1)
	case reflect.Struct:
		for i := range v1.NumField() {
			if eq, ok := valuesEqual(v1.Field(i), v2.Field(i), depth+1); !eq || !ok {
				return eq, ok
			}
		}
		return true, true
	case reflect.Map:
		return mapsEqual(v1, v2, depth)
	case reflect.Func:
		return v1.IsNil() && v2.IsNil(), true
	}
	return scalarsEqual(v1, v2)
}

// scalarsEqual compares two values of the same scalar type; ok is false
// for unexported fields and kinds the walk does not know.
func scalarsEqual(v1, v2 reflect.Value) (eq, ok bool) {
	if !v1.CanInterface() || !v2.CanInterface() {
		// The reflective walk panics on unexported fields.
		return false, false
	}
	switch v1.Kind() {
	case reflect.Bool:
		return v1.Bool() == v2.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v1.Int() == v2.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v1.Uint() == v2.Uint(), true
	case reflect.Float32, reflect.Float64:
		return v1.Float() == v2.Float(), true
	case reflect.Complex64, reflect.Complex128:
		return v1.Complex() == v2.Complex(), true
	case reflect.String:
		return v1.String() == v2.String(), true
	}
	return false, false
}

// slicesEqual compares two slices of the same type: nil and empty alike,
// then element by element.
func slicesEqual(v1, v2 reflect.Value, depth int) (eq, ok bool) {
	e1, e2 := v1.IsNil() || v1.Len() == 0, v2.IsNil() || v2.Len() == 0
	if e1 || e2 {
		return e1 == e2, true
	}
	if v1.Len() != v2.Len() {
		return false, true
	}
	if v1.Pointer() == v2.Pointer() {
		return true, true
	}
	for i := range v1.Len() {
		if eq, ok := valuesEqual(v1.Index(i), v2.Index(i), depth+1); !eq || !ok {
			return eq, ok
		}
	}
	return true, true
}

// mapsEqual compares two maps of the same type: nil and empty alike, then
// entry by entry.
func mapsEqual(v1, v2 reflect.Value, depth int) (eq, ok bool) {
	e1, e2 := v1.IsNil() || v1.Len() == 0, v2.IsNil() || v2.Len() == 0
	if e1 || e2 {
		return e1 == e2, true
	}
	if v1.Len() != v2.Len() {
		return false, true
	}
	if v1.Pointer() == v2.Pointer() {
		return true, true
	}
	switch v1.Type() {
	case stringMapType:
		m1, m2 := v1.Interface().(map[string]string), v2.Interface().(map[string]string)
		for k, x := range m1 {
			if y, found := m2[k]; !found || x != y {
				return false, true
			}
		}
		return true, true
	case anyMapType:
		m1, m2 := v1.Interface().(map[string]any), v2.Interface().(map[string]any)
		for k, x := range m1 {
			y, found := m2[k]
			if !found {
				return false, true
			}
			if x == nil || y == nil {
				if (x == nil) != (y == nil) {
					return false, true
				}
				continue
			}
			if eq, ok := valuesEqual(reflect.ValueOf(x), reflect.ValueOf(y), depth+2); !eq || !ok {
				return eq, ok
			}
		}
		return true, true
	}
	it := v1.MapRange()
	for it.Next() {
		if eq, ok := valuesEqual(it.Value(), v2.MapIndex(it.Key()), depth+1); !eq || !ok {
			return eq, ok
		}
	}
	return true, true
}

// specialEqual applies the equality function fv of equality.Semantic to
// two values of its type t; quantities and times are compared as it
// compares them, on copies, without the reflective call.
func specialEqual(fv reflect.Value, t reflect.Type, v1, v2 reflect.Value) bool {
	if v1.CanAddr() && v2.CanAddr() {
		switch t {
		case quantityType:
			a, b := *v1.Addr().Interface().(*resource.Quantity), *v2.Addr().Interface().(*resource.Quantity)
			return a.Cmp(b) == 0
		case timeType:
			a, b := v1.Addr().Interface().(*metav1.Time), v2.Addr().Interface().(*metav1.Time)
			return a.UTC() == b.UTC()
		case microTimeType:
			a, b := v1.Addr().Interface().(*metav1.MicroTime), v2.Addr().Interface().(*metav1.MicroTime)
			return a.UTC() == b.UTC()
		}
	}
	return fv.Call([]reflect.Value{v1, v2})[0].Bool()
}
