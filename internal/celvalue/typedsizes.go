package celvalue

import (
	"math"
	"reflect"
	"unsafe"
)

// Sizing a path of a typed object through its CEL form (sizesAt over a
// typedMap) converts every value on the way and pays a CEL map lookup
// per step. The Go types along a path are fixed, though: whether a step
// selects a struct field, a string map entry or nothing, where the field
// sits, whether a custom converter intervenes, is known before any value
// is seen. So PathBound compiles each path, for the Go type of the typed
// object it starts at, into a sizer that reads the object in place by
// field offsets, converting nothing, and gives the answer sizesAt gives
// on the converted value. Paths through forms the sizer does not model
// (custom converters, interfaces, maps other than map[string]string
// past their size, the size of a struct, omitzero fields, fields that
// inlined structs write twice) compile to nothing, and are walked in their
// CEL form as before.

// typedSizer returns sizesAt's answer for the value of its type at p.
type typedSizer func(p unsafe.Pointer) (uint64, bool)

// typedPlan is a path's sizer for the typed objects of one struct type.
type typedPlan struct {
	t reflect.Type
	// size is nil when the path cannot be sized in place.
	size typedSizer
}

// typedPathSizes is sizesAt(root, path, 0) for root, a *typedMap over a
// struct, read in place; done is false when the caller must walk the CEL
// form.
func typedPathSizes(path *Path, root any) (b uint64, ok, done bool) {
	m, isMap := root.(*typedMap)
	if !isMap || m.info == nil || !m.v.CanAddr() || len(path.Fields) == 0 {
		return 0, false, false
	}
	if len(m.strs()) > 0 {
		if _, set := m.strs()[path.Fields[0]]; set {
			return 0, false, false
		}
	}
	t := m.v.Type()
	plan := path.typed.Load()
	if plan == nil {
		plan = &typedPlan{t: t}
		if info := infoOf(t); info.layout == m.info {
			plan.size, _ = compileStruct(t, m.info, path, 0)
		}
		if !path.typed.CompareAndSwap(nil, plan) {
			plan = path.typed.Load()
		}
	}
	if plan.t != t || plan.size == nil {
		return 0, false, false
	}
	// UnsafeAddr, unlike Addr, looks up no pointer type.
	b, ok = plan.size(unsafe.Pointer(m.v.UnsafeAddr()))
	return b, ok, true
}

// Answers of sizers that do not depend on the value: nothing there to
// read (a missing field, a null) and a form selectStep does not read.
func absentSize(unsafe.Pointer) (uint64, bool)  { return 0, true }
func unknownSize(unsafe.Pointer) (uint64, bool) { return 0, false }

// compileNode compiles the sizer of path from step on for values of p's
// type, as convert converts them (primitiveValue when prim is set).
func compileNode(p *typeInfo, prim bool, path *Path, step int) (typedSizer, bool) {
	if prim {
		return compileScalar(p.kind, path, step)
	}
	if p.custom != nil {
		return nil, false
	}
	end := step == len(path.Fields)
	switch p.kind {
	case reflect.Pointer:
		elem, ok := compileNode(p.elemInfo(), false, path, step)
		if !ok {
			return nil, false
		}
		return func(ptr unsafe.Pointer) (uint64, bool) {
			q := *(*unsafe.Pointer)(ptr)
			if q == nil {
				return 0, true // null
			}
			return elem(q)
		}, true
	case reflect.Map:
		if p.t.Key().Kind() != reflect.String {
			return nil, false
		}
		if p.t == stringMapType {
			return compileStringMap(path, step), true
		}
		if !end {
			return nil, false
		}
		t := p.t
		return func(ptr unsafe.Pointer) (uint64, bool) {
			return uint64(reflect.NewAt(t, ptr).Elem().Len()), true
		}, true
	case reflect.Slice:
		if p.t.Elem().Kind() == reflect.Uint8 {
			return nil, false
		}
		return compileList(p, path, step)
	case reflect.Struct:
		if p.info.eager {
			return nil, false
		}
		return compileStruct(p.t, p.info, path, step)
	case reflect.Interface:
		return nil, false
	}
	return compileScalar(p.kind, path, step)
}

// compileScalar is compileNode for a value primitiveValue converts.
func compileScalar(kind reflect.Kind, path *Path, step int) (typedSizer, bool) {
	end := step == len(path.Fields)
	switch kind {
	case reflect.String:
		if !end {
			return unknownSize, true
		}
		return func(ptr unsafe.Pointer) (uint64, bool) { return uint64(len(*(*string)(ptr))), true }, true
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Float32, reflect.Float64:
		if !end {
			return unknownSize, true
		}
		return absentSize, true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		if !end {
			return unknownSize, true
		}
		return absentSize, true
	case reflect.Uint:
		if !end {
			return unknownSize, true
		}
		// Above math.MaxInt64 the value is an error, which has no size.
		return func(ptr unsafe.Pointer) (uint64, bool) { return 0, uint64(*(*uint)(ptr)) <= math.MaxInt64 }, true
	case reflect.Uint64:
		if !end {
			return unknownSize, true
		}
		return func(ptr unsafe.Pointer) (uint64, bool) { return 0, *(*uint64)(ptr) <= math.MaxInt64 }, true
	case reflect.Uintptr:
		return unknownSize, true // an error value
	}
	return nil, false
}

// compileStringMap is compileNode for a map[string]string.
func compileStringMap(path *Path, step int) typedSizer {
	switch {
	case step == len(path.Fields):
		return func(ptr unsafe.Pointer) (uint64, bool) {
			return uint64(len(*(*map[string]string)(ptr))), true
		}
	case path.keys[step] == nil && step == len(path.Fields)-1:
		return func(ptr unsafe.Pointer) (uint64, bool) {
			var b uint64
			for k, s := range *(*map[string]string)(ptr) {
				b = max(b, uint64(len(k)), uint64(len(s)))
			}
			return b, true
		}
	case path.keys[step] == nil:
		// The path goes on past the values, strings: selectStep reads
		// none of them.
		return func(ptr unsafe.Pointer) (uint64, bool) {
			return 0, len(*(*map[string]string)(ptr)) == 0
		}
	}
	name, last := path.Fields[step], step == len(path.Fields)-1
	return func(ptr unsafe.Pointer) (uint64, bool) {
		m := *(*map[string]string)(ptr)
		s, found := m[name]
		switch {
		case !found:
			return 0, true // absent (and a nil map is null)
		case last:
			return uint64(len(s)), true
		}
		return 0, false
	}
}

// compileList is compileNode for a slice (not []byte).
func compileList(p *typeInfo, path *Path, step int) (typedSizer, bool) {
	switch {
	case step == len(path.Fields):
		return func(ptr unsafe.Pointer) (uint64, bool) {
			return uint64(len(*(*[]byte)(ptr))), true // any slice header reads as a []byte one
		}, true
	case path.keys[step] != nil:
		// Selecting from a list: nothing if null, unknown otherwise.
		return func(ptr unsafe.Pointer) (uint64, bool) {
			return 0, *(*unsafe.Pointer)(ptr) == nil
		}, true
	}
	elem, ok := compileNode(p.elemInfo(), false, path, step+1)
	if !ok {
		return nil, false
	}
	size := p.t.Elem().Size()
	return func(ptr unsafe.Pointer) (uint64, bool) {
		s := *(*[]byte)(ptr)
		data := unsafe.Pointer(unsafe.SliceData(s))
		var b uint64
		for i := range len(s) {
			x, ok := elem(unsafe.Add(data, uintptr(i)*size))
			if !ok {
				return 0, false
			}
			b = max(b, x)
		}
		return b, true
	}, true
}

// fieldHop is one struct field on the way to a JSON field (see
// fieldStep), by offset.
type fieldHop struct {
	off uintptr
	// empty tells how omitempty tests the field, emptyNever without
	// omitempty.
	empty emptyKind
	// deref: an inlined pointer to a struct, followed (nil: absent).
	deref bool
	// typ is the field's type, for emptyMap.
	typ reflect.Type
}

// emptyKind is how isEmpty tests a field of some kind, read in place.
type emptyKind uint8

const (
	emptyNever emptyKind = iota
	emptyString
	emptySlice // length 0, nil too
	emptyMap
	emptyWord // pointers: nil
	emptyIface
	emptyBool
	empty1
	empty2
	empty4
	empty8
	emptyFloat32
	emptyFloat64
)

// emptyKindOf is the test omitempty applies to fields of type t, or false
// for kinds the sizer does not read.
func emptyKindOf(t reflect.Type) (emptyKind, bool) {
	switch t.Kind() {
	case reflect.String:
		return emptyString, true
	case reflect.Slice:
		return emptySlice, true
	case reflect.Map:
		return emptyMap, true
	case reflect.Pointer:
		return emptyWord, true
	case reflect.Interface:
		return emptyIface, true
	case reflect.Bool:
		return emptyBool, true
	case reflect.Float32:
		return emptyFloat32, true
	case reflect.Float64:
		return emptyFloat64, true
	case reflect.Struct:
		return emptyNever, true
	case reflect.Array:
		if t.Len() == 0 {
			return emptyNever, false // always empty: left to the CEL form
		}
		return emptyNever, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		switch t.Size() {
		case 1:
			return empty1, true
		case 2:
			return empty2, true
		case 4:
			return empty4, true
		case 8:
			return empty8, true
		}
	}
	return emptyNever, false
}

// isEmptyAt is isEmpty for the field at q tested as h says.
func (h *fieldHop) isEmptyAt(q unsafe.Pointer) bool {
	switch h.empty {
	case emptyString:
		return len(*(*string)(q)) == 0
	case emptySlice:
		return len(*(*[]byte)(q)) == 0 // any slice header reads as a []byte one
	case emptyMap:
		return *(*unsafe.Pointer)(q) == nil || reflect.NewAt(h.typ, q).Elem().Len() == 0
	case emptyWord:
		return *(*unsafe.Pointer)(q) == nil
	case emptyIface:
		return *(*unsafe.Pointer)(q) == nil // the type word
	case emptyBool:
		return !*(*bool)(q)
	case empty1:
		return *(*uint8)(q) == 0
	case empty2:
		return *(*uint16)(q) == 0
	case empty4:
		return *(*uint32)(q) == 0
	case empty8:
		return *(*uint64)(q) == 0
	case emptyFloat32:
		return *(*float32)(q) == 0
	case emptyFloat64:
		return *(*float64)(q) == 0
	}
	return false
}

// compileStruct is compileNode for a struct of type t and layout info (a
// typedMap without set strings).
func compileStruct(t reflect.Type, info *structInfo, path *Path, step int) (typedSizer, bool) {
	if step == len(path.Fields) || path.keys[step] == nil {
		return nil, false // a struct's size, its fields: left to the CEL form
	}
	i := info.index(path.Fields[step])
	if i < 0 {
		return absentSize, true
	}
	ways := info.fields[i]
	if len(ways) != 1 {
		return nil, false
	}
	way := ways[0]
	hops := make([]fieldHop, len(way))
	st := t
	for j, fs := range way {
		if fs.omitzero != nil {
			return nil, false
		}
		sf := st.Field(fs.index)
		h := fieldHop{off: sf.Offset, typ: sf.Type}
		if fs.omitempty {
			k, ok := emptyKindOf(sf.Type)
			if !ok {
				return nil, false
			}
			h.empty = k
		}
		if j < len(way)-1 {
			st = sf.Type
			if st.Kind() == reflect.Pointer {
				h.deref, st = true, st.Elem()
			}
			if st.Kind() != reflect.Struct {
				return nil, false
			}
		}
		hops[j] = h
	}
	last := way[len(way)-1].plan
	child, ok := compileNode(last, last.primitive, path, step+1)
	if !ok {
		return nil, false
	}
	if len(hops) == 1 {
		h := hops[0]
		return func(ptr unsafe.Pointer) (uint64, bool) {
			q := unsafe.Add(ptr, h.off)
			if h.empty != emptyNever && h.isEmptyAt(q) {
				return 0, true
			}
			return child(q)
		}, true
	}
	return func(ptr unsafe.Pointer) (uint64, bool) {
		q := ptr
		for k := range hops {
			h := &hops[k]
			q = unsafe.Add(q, h.off)
			if h.empty != emptyNever && h.isEmptyAt(q) {
				return 0, true
			}
			if h.deref {
				if q = *(*unsafe.Pointer)(q); q == nil {
					return 0, true
				}
			}
		}
		return child(q)
	}, true
}
