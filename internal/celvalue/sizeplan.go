package celvalue

import (
	"reflect"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// sizeKind is how convertValue lays out a Go type.
type sizeKind uint8

const (
	// sizeNone: scalars and the like, which have no size.
	sizeNone sizeKind = iota
	sizeString
	// sizeBytes: a []byte, converted to base64 text.
	sizeBytes
	// sizeList: slices, and arrays (which convertValue rejects but cel-go
	// reads as lists).
	sizeList
	sizeMap
	sizePointer
	sizeInterface
	// sizeStruct: a struct read as typedMap reads it.
	sizeStruct
	// sizeEager: a struct converted by eagerStruct.
	sizeEager
)

// sizeConv is the custom converter of a type, if any.
type sizeConv uint8

const (
	convNone sizeConv = iota
	// convGeneric: run convertValue and bound its result.
	convGeneric
	// The converters whose output SizeBound works out itself.
	convTime
	convQuantity
	convIntOrString
)

// sizePlan is what SizeBound needs to know about a Go type, worked out once
// per type: how convertValue treats it and where in its memory the parts
// that can have a size are. The typed walk reads values in place through
// unsafe pointers at the offsets reflect reports; reflect.Value is used
// only for maps, interfaces and converters. Field-by-field reflection
// would cost several times more.
type sizePlan struct {
	typ  reflect.Type
	kind sizeKind
	conv sizeConv
	// done is set once the plan is complete (recursive types see their
	// plan while it is being built).
	done bool
	// elem is the plan of the pointer's target, the list's elements or
	// the map's values; key is the plan of the map's keys.
	elem, key *sizePlan
	// elemSize is the size of a list element; arrayLen the length of an
	// array, -1 for slices.
	elemSize uintptr
	arrayLen int
	// stringMap marks map[string]string and resourceList
	// corev1.ResourceList: the common maps of typed objects, ranged
	// without reflection, which costs several times more.
	stringMap, resourceList bool
	// keys and elems hold scratch copies of map keys and values, which
	// reflect would otherwise copy to the heap at every read; copies
	// holds scratch copies of values of this type (see value).
	keys, elems, copies *sync.Pool
	// Structs: the number of fields of the converted map, at most; the
	// largest of that, its field names and those of the structs inside it
	// by value; and the fields that can have a size. Fields of structs
	// held by value are listed with the outer struct's, so that walking a
	// Deployment does not descend into its metadata, spec, template and
	// pod spec one by one.
	info   *structInfo
	static uint64
	fields []sizeField
	// names and ends divide fields by the field of this struct they are
	// in, which TypedObject's set may replace: those of names[i] end at
	// ends[i].
	names []string
	ends  []int
}

// fieldHow tells fieldsSize how to read a field without calling walk when
// it is a string or empty, as most fields of typed objects are.
type fieldHow uint8

const (
	howWalk fieldHow = iota
	howString
	// howNilable: a pointer, or a map without a converter, which has no
	// size when nil. (The converters turn a nil pointer into null.)
	howNilable
	// howSlice: a slice without a converter, which has no size when
	// empty.
	howSlice
	// howStructPointer: a pointer without a converter to a struct read
	// field by field.
	howStructPointer
)

func fieldHowOf(p *sizePlan) fieldHow {
	switch {
	case p.kind == sizeString && p.conv == convNone:
		return howString
	case p.typ == nil:
	case p.kind == sizePointer && p.conv == convNone && p.elem != nil && p.elem.kind == sizeStruct && p.elem.conv == convNone:
		// (elem is nil while a recursive pointer type's plan is built.)
		return howStructPointer
	case p.typ.Kind() == reflect.Pointer || p.typ.Kind() == reflect.Map && p.conv == convNone:
		return howNilable
	case p.typ.Kind() == reflect.Slice && p.conv == convNone:
		return howSlice
	}
	return howWalk
}

// sizeField is a field that can have a size, found by following hops
// (offsets of inlined pointers to dereference, in order) and then off.
type sizeField struct {
	hops []uintptr
	off  uintptr
	plan *sizePlan
	// how tells how to skip the walk when the field is empty.
	how fieldHow
	// viaPointer tells whether hops is not empty: the field is then
	// addressable whatever the struct is.
	viaPointer bool
}

var (
	stringSizePlan = &sizePlan{kind: sizeString, done: true}
	noSizePlan     = &sizePlan{kind: sizeNone, done: true}
)

// sizePlanOf returns the size plan of t, building it (and the plans of
// the types it reaches) on first use.
func sizePlanOf(t reflect.Type) *sizePlan {
	if p := infoOf(t).size.Load(); p != nil {
		return p
	}
	building := map[reflect.Type]*sizePlan{}
	p := buildSizePlan(t, building)
	// Every plan in building is complete now.
	for bt, bp := range building {
		infoOf(bt).size.CompareAndSwap(nil, bp)
	}
	return p
}

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()

	// quantityCached is the offset of Quantity's cached string, which
	// Quantity.String returns when it is set; -1 if it has none, and then
	// quantities are bounded by running their converter.
	quantityCached = stringFieldOffset(quantityType, "s")
)

func stringFieldOffset(t reflect.Type, name string) int {
	f, ok := t.FieldByName(name)
	if !ok || len(f.Index) != 1 || f.Type != reflect.TypeFor[string]() {
		return -1
	}
	return int(f.Offset)
}

// buildSizePlan works out the plan of t as convertValue converts it. Plans
// under construction are in building, so recursive types terminate.
func buildSizePlan(t reflect.Type, building map[reflect.Type]*sizePlan) *sizePlan {
	if p := infoOf(t).size.Load(); p != nil {
		return p
	}
	if p, ok := building[t]; ok {
		return p
	}
	p := &sizePlan{typ: t, arrayLen: -1}
	building[t] = p
	defer func() { p.done = true }()
	p.copies = scratchPool(t)
	if value.TypeReflectEntryOf(t).CanConvertToUnstructured() {
		p.conv = convGeneric
		switch t {
		case timeType:
			p.conv = convTime
		case quantityType:
			if quantityCached >= 0 {
				p.conv = convQuantity
			}
		case intOrStringType:
			p.conv = convIntOrString
		}
		if t.Kind() == reflect.Pointer {
			// A pointer's converter is its target's: nil converts to
			// null, anything else as the target does.
			if e := buildSizePlan(t.Elem(), building); e.conv > convGeneric {
				p.conv, p.kind, p.elem = convNone, sizePointer, e
				return p
			}
		}
		// The layout is worked out all the same: TypedObject reads a
		// struct with a converter field by field when it has fields to
		// set.
	}
	switch t.Kind() {
	case reflect.String:
		p.kind = sizeString
	case reflect.Pointer:
		p.kind = sizePointer
		p.elem = buildSizePlan(t.Elem(), building)
		if p.elem.none() && p.conv == convNone {
			p.kind = sizeNone
		}
	case reflect.Interface:
		p.kind = sizeInterface
	case reflect.Map:
		p.addMap(t, building)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			p.kind = sizeBytes
			break
		}
		p.kind = sizeList
		p.elem = buildSizePlan(t.Elem(), building)
		p.elemSize = t.Elem().Size()
	case reflect.Array:
		p.kind = sizeList
		p.elem = buildSizePlan(t.Elem(), building)
		p.elemSize = t.Elem().Size()
		p.arrayLen = t.Len()
	case reflect.Struct:
		p.addStruct(t, building)
	}
	return p
}

// addStruct completes p, the plan of struct type t.
func (p *sizePlan) addStruct(t reflect.Type, building map[reflect.Type]*sizePlan) {
	info := structInfoOf(t)
	if info.eager {
		p.kind = sizeEager
		return
	}
	p.kind = sizeStruct
	p.info = info
	p.static = uint64(len(info.names))
	for _, name := range info.names {
		p.static = max(p.static, uint64(len(name)))
		for _, steps := range info.paths[name] {
			p.addField(t, steps, building)
		}
		if n := len(p.fields); n > 0 && (len(p.ends) == 0 || p.ends[len(p.ends)-1] < n) {
			p.names = append(p.names, name)
			p.ends = append(p.ends, n)
		}
	}
}

// addMap completes p, the plan of map type t.
func (p *sizePlan) addMap(t reflect.Type, building map[reflect.Type]*sizePlan) {
	p.kind = sizeMap
	p.stringMap = t == reflect.TypeFor[map[string]string]()
	// typedMap's keys are the keys' strings, converters or not.
	p.key = stringSizePlan
	if t.Key().Kind() != reflect.String {
		p.key = buildSizePlan(t.Key(), building)
	} else if !p.stringMap {
		p.keys = scratchPool(t.Key())
	}
	p.elem = buildSizePlan(t.Elem(), building)
	p.resourceList = t == reflect.TypeFor[corev1.ResourceList]() && p.elem.conv == convQuantity
	if !pointerShaped(t.Elem()) {
		p.elems = scratchPool(t.Elem())
	}
}

// addField adds the field that steps lead to from struct type t.
func (p *sizePlan) addField(t reflect.Type, steps []fieldStep, building map[reflect.Type]*sizePlan) {
	var hops []uintptr
	off := uintptr(0)
	ft := t
	for i, st := range steps {
		sf := ft.Field(st.index)
		off += sf.Offset
		ft = sf.Type
		if i < len(steps)-1 && ft.Kind() == reflect.Pointer {
			hops = append(hops, off)
			off, ft = 0, ft.Elem()
		}
	}
	fp := fieldSizePlan(ft, building)
	if fp.none() {
		return
	}
	if fp.kind == sizeStruct && fp.conv == convNone && fp.done {
		// A struct held by value: take its fields in.
		p.static = max(p.static, fp.static)
		for _, f := range fp.fields {
			if len(f.hops) == 0 {
				f.off += off
				f.hops = hops
			} else {
				f.hops = append(slices.Clip(hops), f.hops...)
				f.hops[len(hops)] += off
			}
			f.viaPointer = len(f.hops) > 0
			p.fields = append(p.fields, f)
		}
		return
	}
	p.fields = append(p.fields, sizeField{hops: hops, off: off, plan: fp, how: fieldHowOf(fp), viaPointer: len(hops) > 0})
}

// none reports whether values of the plan never have a size.
func (p *sizePlan) none() bool { return p.kind == sizeNone && p.conv == convNone }

// fieldSizePlan is the plan of a struct field of type t: fieldValue
// converts the primitive kinds without looking for converters.
func fieldSizePlan(t reflect.Type, building map[reflect.Type]*sizePlan) *sizePlan {
	switch t.Kind() {
	case reflect.String:
		return stringSizePlan
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return noSizePlan
	}
	return buildSizePlan(t, building)
}

// pointerShaped tells whether reflect reads a map value of type t without
// copying it to the heap.
func pointerShaped(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	}
	return false
}

func scratchPool(t reflect.Type) *sync.Pool {
	return &sync.Pool{New: func() any {
		v := reflect.New(t).Elem()
		return &v
	}}
}
