package celenv

import (
	"math"
	"reflect"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// SizeBound returns an upper bound on the size of every string, bytes, list
// and map value reachable from v in its CEL form, as CEL's cost model
// measures size: the length of a string (counted in bytes, which is never
// less than the code points CEL counts), the length of bytes, the number of
// elements of a list and the number of entries of a map. Scalars (int,
// uint, double, bool, null) have no size. The result is the largest size
// over all those values, nested ones and map keys included; 0 when there
// are none.
//
// v is a value bound to an admission variable (see [Input]): nil, a [Lazy]
// (called once), a value from [TypedValue] or [TypedObject], a JSON-like Go
// value (map[string]any, []any, string, int64, float64, bool, []byte), a
// CEL value, or any other Go value, which is read as [TypedValue] would
// convert it.
//
// The result is never below the true maximum; it may be above it. A typed
// struct counts every JSON field name of its type and every field as
// present, omitempty or not, and a few values (invalid UTF-8 in an
// intstr.IntOrString string) are bounded rather than measured. A value
// nested too deeply to walk, which in practice means a cyclic one, gives
// math.MaxUint64.
//
// SizeBound reads v without converting it: typed values are read in place
// and, but for custom converters, without allocating. The converters of
// metav1.Time, resource.Quantity and intstr.IntOrString are not run either:
// SizeBound works out the length of their output. Neither v nor what a
// typed value has remembered changes; v must not change during the call.
func SizeBound(v any) uint64 {
	if f, ok := v.(Lazy); ok {
		v = f()
	}
	var w sizeWalker
	return w.native(v)
}

// sizeMaxDepth bounds the nesting SizeBound walks. It is far above what
// decoded JSON reaches, so in practice only cycles hit it.
const sizeMaxDepth = 1 << 17

// sizeWalker is the state of one SizeBound call.
type sizeWalker struct {
	depth int
	// saturated is set once the depth limit is hit: the answer is then
	// math.MaxUint64 and walking on is wasted (and, on a cyclic value
	// with branching, endless).
	saturated bool
}

// enter accounts for one more level of nesting and reports false when the
// walk must stop.
func (w *sizeWalker) enter() bool {
	if w.saturated {
		return false
	}
	w.depth++
	if w.depth > sizeMaxDepth {
		w.saturated = true
		return false
	}
	return true
}

func (w *sizeWalker) leave(b uint64) uint64 {
	w.depth--
	if w.saturated {
		return math.MaxUint64
	}
	return b
}

// native bounds a Go value as cel-go's adapter converts it (orderedAdapter
// over types.DefaultTypeAdapter). Any other Go value is read as TypedValue
// converts it, which is never smaller than what cel-go's adapter makes of
// it: []byte becomes base64 text, never shorter than the bytes, and maps
// with other keys and arrays are read as the maps and lists cel-go makes.
func (w *sizeWalker) native(v any) uint64 {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return 0
	case string:
		return uint64(len(x))
	case []byte:
		return uint64(len(x))
	case map[string]any:
		if !w.enter() {
			return math.MaxUint64
		}
		b := uint64(len(x))
		for k, e := range x {
			b = max(b, uint64(len(k)), w.native(e))
		}
		return w.leave(b)
	case []any:
		if !w.enter() {
			return math.MaxUint64
		}
		b := uint64(len(x))
		for _, e := range x {
			b = max(b, w.native(e))
		}
		return w.leave(b)
	case map[string]string:
		return stringMapSize(x)
	case []string:
		b := uint64(len(x))
		for _, s := range x {
			b = max(b, uint64(len(s)))
		}
		return b
	case ref.Val:
		return w.val(x)
	}
	rv := reflect.ValueOf(v)
	p := sizePlanOf(rv.Type())
	if rv.Kind() == reflect.Struct {
		// As TypedObject does: converters see an addressable struct.
		c := reflect.New(rv.Type())
		c.Elem().Set(rv)
		return w.walk(p, c.UnsafePointer(), false)
	}
	return w.value(p, rv)
}

func stringMapSize(m map[string]string) uint64 {
	b := uint64(len(m))
	for k, s := range m {
		b = max(b, uint64(len(k)), uint64(len(s)))
	}
	return b
}

// val bounds a CEL value.
func (w *sizeWalker) val(v ref.Val) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(len(x))
	case types.Bytes:
		return uint64(len(x))
	case *typedMap:
		p := sizePlanOf(x.v.Type())
		if x.info == nil {
			return w.value(p, x.v)
		}
		if !w.enter() {
			return math.MaxUint64
		}
		var b uint64
		if x.v.CanAddr() {
			b = w.structSize(p, x.v.Addr().UnsafePointer(), false, x.set)
		} else {
			// TypedObject's structs are addressable, but be safe.
			c := reflect.New(x.v.Type())
			c.Elem().Set(x.v)
			b = w.structSize(p, c.UnsafePointer(), true, x.set)
		}
		return w.leave(b)
	case *typedList:
		if !w.enter() {
			return math.MaxUint64
		}
		return w.leave(w.listSize(sizePlanOf(x.v.Type()), x.v.UnsafePointer(), x.v.Len(), false))
	case *orderedMap:
		// Its values are converted by orderedAdapter, as native reads them.
		return w.native(x.m)
	case *types.Optional:
		if x.HasValue() {
			return w.val(x.GetValue())
		}
		return 0
	case traits.Mapper:
		if !w.enter() {
			return math.MaxUint64
		}
		b := sizeOfSize(x.Size())
		var n uint64
		for it := x.Iterator(); it.HasNext() == types.True; n++ {
			k := it.Next()
			b = max(b, w.val(k), w.val(x.Get(k)))
		}
		return w.leave(max(b, n))
	case traits.Lister:
		if !w.enter() {
			return math.MaxUint64
		}
		b := sizeOfSize(x.Size())
		var n uint64
		for it := x.Iterator(); it.HasNext() == types.True; n++ {
			b = max(b, w.val(it.Next()))
		}
		return w.leave(max(b, n))
	}
	// Scalars, null, errors, unknowns and types have no size.
	return 0
}

func sizeOfSize(v ref.Val) uint64 {
	if n, ok := v.(types.Int); ok && n > 0 {
		return uint64(n)
	}
	return 0
}

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

// sizePlans caches *sizePlan per reflect.Type. Plans never change once
// stored.
var sizePlans sync.Map

func sizePlanOf(t reflect.Type) *sizePlan {
	if p, ok := sizePlans.Load(t); ok {
		return p.(*sizePlan)
	}
	building := map[reflect.Type]*sizePlan{}
	p := buildSizePlan(t, building)
	// Every plan in building is complete now.
	for bt, bp := range building {
		sizePlans.LoadOrStore(bt, bp)
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
	if p, ok := sizePlans.Load(t); ok {
		return p.(*sizePlan)
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
		info := structInfoOf(t)
		if info.eager {
			p.kind = sizeEager
			break
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
	return p
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

// walk bounds the value of p's type at ptr as convertValue converts it.
// noAddr tells that the value is a scratch copy of one convertValue sees
// unaddressable (a map value or what an interface holds), which matters to
// converters with pointer receivers.
func (w *sizeWalker) walk(p *sizePlan, ptr unsafe.Pointer, noAddr bool) uint64 {
	switch p.conv {
	case convNone:
	case convTime:
		return timeSize((*metav1.Time)(ptr))
	case convQuantity:
		return w.quantitySize((*resource.Quantity)(ptr))
	case convIntOrString:
		x := (*intstr.IntOrString)(ptr)
		switch x.Type {
		case intstr.Int:
			return 0
		case intstr.String:
			// MarshalJSON writes each invalid UTF-8 byte as U+FFFD,
			// three bytes once decoded.
			if utf8.ValidString(x.StrVal) {
				return uint64(len(x.StrVal))
			}
			return 3 * uint64(len(x.StrVal))
		}
		// Other types fail to convert: an error value.
		return 0
	default:
		v := reflect.NewAt(p.typ, ptr).Elem()
		if noAddr && v.Kind() != reflect.Interface {
			v = reflect.ValueOf(v.Interface())
		}
		return w.val(convertValue(v))
	}
	switch p.kind {
	case sizeNone:
		return 0
	case sizeString:
		return uint64(len(*(*string)(ptr)))
	case sizeBytes:
		return base64Len(len(*(*[]byte)(ptr)))
	case sizeStruct:
		// Structs inside structs by value are taken in by their plan, so
		// this is one level of nesting for the depth limit.
		if !w.enter() {
			return math.MaxUint64
		}
		return w.leave(w.structSize(p, ptr, noAddr, nil))
	}
	if !w.enter() {
		return math.MaxUint64
	}
	var b uint64
	switch p.kind {
	case sizePointer:
		if q := *(*unsafe.Pointer)(ptr); q != nil {
			b = w.walk(p.elem, q, false)
		}
	case sizeInterface:
		if v := reflect.NewAt(p.typ, ptr).Elem(); !v.IsNil() {
			e := v.Elem()
			b = w.value(sizePlanOf(e.Type()), e)
		}
	case sizeMap:
		switch {
		case *(*unsafe.Pointer)(ptr) == nil:
		case p.stringMap:
			b = stringMapSize(*(*map[string]string)(ptr))
		case p.resourceList:
			b = w.resourceListSize(*(*corev1.ResourceList)(ptr))
		default:
			b = w.mapSize(p, reflect.NewAt(p.typ, ptr).Elem())
		}
	case sizeList:
		if p.arrayLen >= 0 {
			b = w.listSize(p, ptr, p.arrayLen, noAddr)
		} else {
			s := *(*[]byte)(ptr) // any slice header reads as a []byte one
			b = w.listSize(p, unsafe.Pointer(unsafe.SliceData(s)), len(s), false)
		}
	case sizeEager:
		b = w.val(eagerStruct(reflect.NewAt(p.typ, ptr).Elem()))
	}
	return w.leave(b)
}

// base64Len is the length of the base64 text of n bytes: 4 characters per
// 3 bytes, the last group padded.
func base64Len(n int) uint64 { return 4 * ((uint64(n) + 2) / 3) }

// value bounds v, of p's type, which need not be addressable.
func (w *sizeWalker) value(p *sizePlan, v reflect.Value) uint64 {
	if v.CanAddr() {
		return w.walk(p, v.Addr().UnsafePointer(), false)
	}
	if p.conv == convGeneric {
		return w.val(convertValue(v))
	}
	switch v.Kind() {
	case reflect.String:
		if p.conv == convNone {
			return uint64(v.Len())
		}
	case reflect.Slice:
		if p.kind == sizeBytes {
			return base64Len(v.Len())
		}
		if !w.enter() {
			return math.MaxUint64
		}
		return w.leave(w.listSize(p, v.UnsafePointer(), v.Len(), false))
	case reflect.Map:
		if !w.enter() {
			return math.MaxUint64
		}
		return w.leave(w.mapSize(p, v))
	case reflect.Pointer:
		if p.kind != sizePointer || v.IsNil() {
			return 0
		}
		if !w.enter() {
			return math.MaxUint64
		}
		return w.leave(w.walk(p.elem, v.UnsafePointer(), false))
	}
	if p.none() {
		return 0
	}
	// Structs, arrays and the like: read a scratch copy in place.
	c := p.copies.Get().(*reflect.Value)
	c.Set(v)
	b := w.walk(p, c.Addr().UnsafePointer(), true)
	c.SetZero()
	p.copies.Put(c)
	return b
}

func (w *sizeWalker) listSize(p *sizePlan, data unsafe.Pointer, n int, noAddr bool) uint64 {
	b := uint64(n)
	e := p.elem
	switch {
	case n == 0 || e.none():
	case e.conv != convNone:
		for i := range n {
			b = max(b, w.walk(e, unsafe.Add(data, uintptr(i)*p.elemSize), noAddr))
		}
	case e.kind == sizeString:
		for i := range n {
			b = max(b, uint64(len(*(*string)(unsafe.Add(data, uintptr(i)*p.elemSize)))))
		}
	case e.kind == sizeStruct:
		// Lists of structs are common: read the elements' fields here
		// rather than through walk and structSize.
		if !w.enter() {
			return math.MaxUint64
		}
		b = max(b, e.static)
		for i := range n {
			b = w.fieldsSize(e.fields, b, unsafe.Add(data, uintptr(i)*p.elemSize), noAddr)
		}
		b = w.leave(b)
	default:
		for i := range n {
			b = max(b, w.walk(e, unsafe.Add(data, uintptr(i)*p.elemSize), noAddr))
		}
	}
	return b
}

// mapSize bounds map v as typedMap reads it.
func (w *sizeWalker) mapSize(p *sizePlan, v reflect.Value) uint64 {
	if v.IsNil() {
		return 0
	}
	b := uint64(v.Len())
	if v.CanInterface() {
		switch {
		case p.stringMap:
			return stringMapSize(v.Interface().(map[string]string))
		case p.resourceList:
			return w.resourceListSize(v.Interface().(corev1.ResourceList))
		}
	}
	keys, elems := !p.key.none(), !p.elem.none()
	if !keys && !elems {
		return b
	}
	// Keys and values are read into scratch copies, when they are not
	// pointer-shaped, since reflect copies them to the heap otherwise. A
	// map reached through an unexported field cannot be read that way.
	var kbuf, ebuf *reflect.Value
	var eptr unsafe.Pointer
	if v.CanInterface() {
		if keys && p.keys != nil {
			kbuf = p.keys.Get().(*reflect.Value)
		}
		if elems && p.elems != nil {
			ebuf = p.elems.Get().(*reflect.Value)
			eptr = ebuf.Addr().UnsafePointer()
		}
	}
	var it reflect.MapIter
	it.Reset(v)
	for it.Next() {
		if keys {
			if kbuf != nil {
				kbuf.SetIterKey(&it)
				b = max(b, uint64(kbuf.Len()))
			} else if p.key == stringSizePlan {
				b = max(b, uint64(it.Key().Len()))
			} else {
				b = max(b, w.value(p.key, it.Key()))
			}
		}
		if elems {
			if ebuf != nil {
				ebuf.SetIterValue(&it)
				b = max(b, w.walk(p.elem, eptr, true))
			} else {
				b = max(b, w.value(p.elem, it.Value()))
			}
		}
	}
	it.Reset(reflect.Value{})
	// Clear the scratch copies, so the pools keep nothing alive.
	if kbuf != nil {
		kbuf.SetZero()
		p.keys.Put(kbuf)
	}
	if ebuf != nil {
		ebuf.SetZero()
		p.elems.Put(ebuf)
	}
	return b
}

func (w *sizeWalker) resourceListSize(m corev1.ResourceList) uint64 {
	b := uint64(len(m))
	for k, q := range m {
		b = max(b, uint64(len(k)), w.quantitySize(&q))
	}
	return b
}

// structSize bounds the struct at ptr read as typedMap reads it, with the
// string fields in set added or replacing its own. Every field counts as
// present: an omitempty field left out is empty, which has size 0, and a
// field omitzero leaves out or an inlined field another one hides only
// makes the bound larger.
func (w *sizeWalker) structSize(p *sizePlan, ptr unsafe.Pointer, noAddr bool, set map[string]string) uint64 {
	b := max(p.static, uint64(len(p.info.names)+len(set)))
	if len(set) == 0 {
		return w.fieldsSize(p.fields, b, ptr, noAddr)
	}
	for k, s := range set {
		b = max(b, uint64(len(k)), uint64(len(s)))
	}
	start := 0
	for i, name := range p.names {
		if _, ok := set[name]; !ok {
			b = w.fieldsSize(p.fields[start:p.ends[i]], b, ptr, noAddr)
		}
		start = p.ends[i]
	}
	return b
}

// fieldsSize returns the largest of b and the bounds of fields of the
// struct at ptr.
func (w *sizeWalker) fieldsSize(fields []sizeField, b uint64, ptr unsafe.Pointer, noAddr bool) uint64 {
	for i := range fields {
		f := &fields[i]
		q := ptr
		for _, h := range f.hops {
			if q = *(*unsafe.Pointer)(unsafe.Add(q, h)); q == nil {
				break
			}
		}
		if q == nil {
			continue
		}
		q = unsafe.Add(q, f.off)
		switch f.how {
		case howString:
			b = max(b, uint64(len(*(*string)(q))))
			continue
		case howNilable:
			if *(*unsafe.Pointer)(q) == nil {
				continue
			}
		case howSlice:
			s := *(*[]byte)(q) // any slice header reads as a []byte one
			if len(s) == 0 {
				continue
			}
			if f.plan.kind == sizeList {
				if !w.enter() {
					return math.MaxUint64
				}
				b = max(b, w.leave(w.listSize(f.plan, unsafe.Pointer(unsafe.SliceData(s)), len(s), false)))
				continue
			}
		case howStructPointer:
			// What walk would do, without two calls.
			t := *(*unsafe.Pointer)(q)
			if t == nil {
				continue
			}
			if !w.enter() {
				return math.MaxUint64
			}
			e := f.plan.elem
			b = w.leave(w.fieldsSize(e.fields, max(b, e.static), t, false))
			continue
		}
		b = max(b, w.walk(f.plan, q, noAddr && !f.viaPointer))
	}
	return b
}

// timeSize bounds metav1.Time's converter output: null for the zero time,
// otherwise the UTC time in RFC 3339, whose only part of varying length is
// the year.
func timeSize(t *metav1.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	// "2006-01-02T15:04:05Z": the year has at least 4 digits, and a sign
	// if negative; 16 characters follow.
	y := t.UTC().Year()
	n := uint64(16)
	if y < 0 {
		n++
		y = -y
	}
	d := uint64(1)
	for ; y >= 10; y /= 10 {
		d++
	}
	return n + max(d, 4)
}

// quantitySize bounds resource.Quantity's converter output, its String:
// the cached string if set, otherwise the canonical form.
func (w *sizeWalker) quantitySize(q *resource.Quantity) uint64 {
	if n := len(*(*string)(unsafe.Add(unsafe.Pointer(q), quantityCached))); n > 0 {
		return uint64(n)
	}
	if q.Format == resource.BinarySI && (q.CmpInt64(-1024) <= 0 || q.CmpInt64(1024) >= 0) {
		// Here CanonicalizeBytes allocates (AsScale returns an
		// interface). An integer is written as itself with its factors
		// of 1024 moved into a suffix, Ki to Ei.
		i, ok := q.AsInt64()
		if !ok || i == math.MinInt64 {
			return w.val(convertValue(reflect.ValueOf(*q)))
		}
		n := uint64(0)
		if i < 0 {
			n, i = 1, -i
		}
		if i%1024 == 0 {
			n += 2
			for i%1024 == 0 {
				i /= 1024
			}
		}
		for n++; i >= 10; i /= 10 {
			n++
		}
		return n
	}
	// CanonicalizeBytes only reads the quantity. Its buffer escapes, so
	// it comes from a pool.
	buf := quantityBufs.Get().(*[]byte)
	num, suffix := q.CanonicalizeBytes((*buf)[:0])
	n := uint64(len(num) + len(suffix))
	quantityBufs.Put(buf)
	return n
}

var quantityBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 64)
	return &b
}}
