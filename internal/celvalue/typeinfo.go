package celvalue

import (
	"reflect"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// typeInfo is everything the package works out about one Go type, once:
// how values of the type convert (the conversion plan), the JSON layout of
// a struct type, and how SizeBound reads the type. Struct fields, list
// elements and pointer targets keep the typeInfo of their type, so
// converting them looks nothing up.
type typeInfo struct {
	t    reflect.Type
	kind reflect.Kind
	// primitive is set for the kinds fieldValue converts without
	// looking for custom converters.
	primitive bool
	// custom is the type's reflect cache entry when it has a custom
	// converter (unstructured converter or JSON marshaler), else nil.
	custom *value.TypeReflectCacheEntry
	// layout is the JSON layout of a struct type, converter or not:
	// TypedObject reads a struct with a converter field by field when it
	// has fields to set.
	layout *structInfo
	// info is layout for a struct type without a custom converter (the
	// structs converted field by field), else nil.
	info *structInfo
	// elem is the typeInfo of t.Elem() for pointers, slices and maps,
	// linked on first use as types may be recursive.
	elem atomic.Pointer[typeInfo]
	// size is how SizeBound reads the type, set once its plan is
	// complete (see sizePlanOf).
	size atomic.Pointer[sizePlan]
}

// typeInfos is the per-type cache: reflect.Type -> *typeInfo. An entry
// never changes once stored, but for elem and size, which are only ever
// set to the same values.
var typeInfos sync.Map

// infoOf returns the typeInfo of t.
func infoOf(t reflect.Type) *typeInfo {
	if p, ok := typeInfos.Load(t); ok {
		return p.(*typeInfo)
	}
	p := &typeInfo{t: t, kind: t.Kind()}
	switch p.kind {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		p.primitive = true
	}
	if e := value.TypeReflectEntryOf(t); e.CanConvertToUnstructured() {
		p.custom = e
	}
	if p.kind == reflect.Struct {
		// Struct values cannot contain themselves, so this recursion
		// through the field types ends.
		p.layout = newStructInfo(t)
		if p.custom == nil {
			p.info = p.layout
		}
	}
	actual, _ := typeInfos.LoadOrStore(t, p)
	return actual.(*typeInfo)
}

// elemInfo returns the typeInfo of p.t.Elem().
func (p *typeInfo) elemInfo() *typeInfo {
	if e := p.elem.Load(); e != nil {
		return e
	}
	e := infoOf(p.t.Elem())
	p.elem.Store(e)
	return e
}

// structInfoOf returns the JSON layout of struct type t.
func structInfoOf(t reflect.Type) *structInfo { return infoOf(t).layout }
