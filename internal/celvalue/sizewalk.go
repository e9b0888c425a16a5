package celvalue

import (
	"math"
	"reflect"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
// v is a value bound to an admission variable: nil, a [Lazy]
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
			b = w.structSize(p, x.v.Addr().UnsafePointer(), false, x.strs())
		} else {
			// TypedObject's structs are addressable, but be safe.
			c := reflect.New(x.v.Type())
			c.Elem().Set(x.v)
			b = w.structSize(p, c.UnsafePointer(), true, x.strs())
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
		return intOrStringSize((*intstr.IntOrString)(ptr))
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
