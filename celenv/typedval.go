package celenv

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/value"
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
		if s, ok := structValue(v.Elem()).(*typedMap); ok {
			s.set = set
			return s
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
	return planOf(v.Type()).convert(v)
}

// convPlan is what convertValue needs to know about a type, worked out
// once per type. Struct fields, list elements and pointer targets keep the
// plan of their type, so converting them looks nothing up.
type convPlan struct {
	t    reflect.Type
	kind reflect.Kind
	// primitive is set for the kinds fieldValue converts without
	// looking for custom converters.
	primitive bool
	// custom is the type's reflect cache entry when it has a custom
	// converter (unstructured converter or JSON marshaler), else nil.
	custom *value.TypeReflectCacheEntry
	// info is the layout of a struct type without a custom converter.
	info *structInfo
	// elem is the plan of t.Elem() for pointers, slices and maps, linked
	// on first use as types may be recursive.
	elem atomic.Pointer[convPlan]
}

// convPlans caches convPlan per reflect.Type; plans never change once
// stored, but for elem, which is only ever set to the same plan.
var convPlans sync.Map // reflect.Type -> *convPlan

func planOf(t reflect.Type) *convPlan {
	if p, ok := convPlans.Load(t); ok {
		return p.(*convPlan)
	}
	p := &convPlan{t: t, kind: t.Kind()}
	switch p.kind {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		p.primitive = true
	}
	if e := value.TypeReflectEntryOf(t); e.CanConvertToUnstructured() {
		p.custom = e
	} else if p.kind == reflect.Struct {
		// Struct values cannot contain themselves, so this recursion
		// through the field types ends.
		p.info = structInfoOf(t)
	}
	actual, _ := convPlans.LoadOrStore(t, p)
	return actual.(*convPlan)
}

// elemPlan returns the plan of p.t.Elem().
func (p *convPlan) elemPlan() *convPlan {
	if e := p.elem.Load(); e != nil {
		return e
	}
	e := planOf(p.t.Elem())
	p.elem.Store(e)
	return e
}

// convert is convertValue for v, a valid value of type p.t.
func (p *convPlan) convert(v reflect.Value) ref.Val {
	if p.kind == reflect.Interface && v.IsNil() {
		return types.NullValue
	}
	if p.custom != nil {
		u, err := p.custom.ToUnstructured(v)
		if err != nil {
			return types.NewErr("%v", err)
		}
		switch u := u.(type) {
		case nil:
			return types.NullValue
		case string:
			// The common case (quantities, times, int-or-strings), as
			// the adapter converts it.
			return types.String(u)
		}
		return jsonAdapter().NativeToValue(u)
	}
	switch p.kind {
	case reflect.Pointer:
		if v.IsNil() {
			return types.NullValue
		}
		return p.elemPlan().convert(v.Elem())
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
			m.strMap = v.Interface().(map[string]string)
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

// primitiveValue converts a value of a primitive kind, ignoring custom
// converters, as the converter does for struct fields of those kinds.
func primitiveValue(v reflect.Value) ref.Val {
	switch v.Kind() {
	case reflect.String:
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

// fieldValue converts a struct field's value f; p is the plan of the
// field's type.
func fieldValue(f reflect.Value, p *convPlan) ref.Val {
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

// fieldStep is one struct field on the way to a JSON field: inlined
// (embedded) fields first, the named field last.
type fieldStep struct {
	index     int
	omitempty bool
	omitzero  func(reflect.Value) bool
	// plan is the plan of the named field's type (last step only).
	plan *convPlan
}

// structInfo is what the converter needs to know about a struct type.
type structInfo struct {
	// names are the distinct JSON field names, sorted.
	names []string
	// paths lists, per name, the fields that write it in the converter's
	// order; the last present one wins.
	paths map[string][][]fieldStep
	// eager is set for structs converted eagerly.
	eager bool
	// fields holds paths[names[i]] at i, and table finds i for a name:
	// the lookup of every field read, quicker than paths.
	fields [][][]fieldStep
	table  nameTable
}

// structInfos caches structInfo per reflect.Type. The entries depend only
// on the type and never change once stored.
var structInfos sync.Map // reflect.Type -> *structInfo

func structInfoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{paths: map[string][][]fieldStep{}}
	if !si.add(t, nil, 0) {
		si = &structInfo{eager: true}
	} else {
		for n := range si.paths {
			si.names = append(si.names, n)
		}
		slices.Sort(si.names)
		si.fields = make([][][]fieldStep, len(si.names))
		for i, n := range si.names {
			si.fields[i] = si.paths[n]
		}
		si.table = newNameTable(si.names)
	}
	actual, _ := structInfos.LoadOrStore(t, si)
	return actual.(*structInfo)
}

// index returns the position of name in si.names, or -1.
func (si *structInfo) index(name string) int {
	if si.table.slots == nil {
		// No perfect table: over 255 names, or names whose keys
		// collide (none of the k8s.io/api types'): search them.
		if i, ok := slices.BinarySearch(si.names, name); ok {
			return i
		}
		return -1
	}
	i := int(si.table.slots[(nameKey(name)*si.table.mul)>>si.table.shift]) - 1
	if i < 0 || si.names[i] != name {
		return -1
	}
	return i
}

// nameTable is a perfect hash table of a struct's JSON field names: a
// name's slot is a multiplicative hash of its key, and no two names share
// one. A lookup is two loads, a multiplication and one string comparison,
// cheaper than a map lookup.
type nameTable struct {
	// slots holds 1 + the position of the name hashed there, 0 if none.
	slots []uint8
	mul   uint64
	shift uint8
}

// nameKey mixes the length and the bytes of name, all of them for names of
// up to 16 bytes (most JSON field names): its first and last eight.
func nameKey(name string) uint64 {
	n := len(name)
	if n < 8 {
		k := uint64(n) << 56
		for i := range n {
			k |= uint64(name[i]) << (8 * i)
		}
		return k
	}
	return le64(name[:8]) ^ bits.RotateLeft64(le64(name[n-8:]), 29) ^ uint64(n)
}

// le64 reads eight bytes of s as a little-endian number (one load).
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// newNameTable tries multipliers for tables of growing size until one puts
// every name in its own slot. It returns an empty table when it finds
// none, which takes names with the same key or very bad luck.
func newNameTable(names []string) nameTable {
	if len(names) == 0 || len(names) > math.MaxUint8 {
		return nameTable{}
	}
	seed := uint64(0x9e3779b97f4a7c15)
	minBits := bits.Len(uint(len(names)))
	for b := minBits + 1; b <= minBits+4; b++ {
		slots := make([]uint8, 1<<b)
	tries:
		for range 256 {
			// A fixed pseudo-random sequence keeps tables deterministic.
			seed = seed*6364136223846793005 + 1442695040888963407
			mul := seed | 1
			clear(slots)
			for i, n := range names {
				h := (nameKey(n) * mul) >> (64 - b)
				if slots[h] != 0 {
					continue tries
				}
				slots[h] = uint8(i + 1)
			}
			return nameTable{slots: slots, mul: mul, shift: uint8(64 - b)}
		}
	}
	return nameTable{}
}

// add records the fields of struct type t reached through prefix. It
// reports false for structs the lazy form does not model.
func (si *structInfo) add(t reflect.Type, prefix []fieldStep, depth int) bool {
	if depth > 32 {
		return false
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			return false
		}
		step := fieldStep{index: i}
		name := ""
		tag, hasTag := sf.Tag.Lookup("json")
		if !hasTag || tag == "" {
			if !sf.Anonymous {
				name = sf.Name
			}
		} else {
			items := strings.Split(tag, ",")
			name = items[0]
			if name == "" && !sf.Anonymous {
				name = sf.Name
			}
			for _, opt := range items[1:] {
				switch opt {
				case "omitempty":
					step.omitempty = true
				case "omitzero":
					step.omitzero = value.OmitZeroFunc(sf.Type)
				}
			}
		}
		if name == "-" {
			continue
		}
		if name != "" {
			step.plan = planOf(sf.Type)
		}
		path := append(slices.Clip(prefix), step)
		if name != "" {
			si.paths[name] = append(si.paths[name], path)
			continue
		}
		// Inlined: only structs (or pointers to them) without custom
		// converters merge their fields into this map.
		ft := sf.Type
		if value.TypeReflectEntryOf(ft).CanConvertToUnstructured() {
			return false
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
			if value.TypeReflectEntryOf(ft).CanConvertToUnstructured() {
				return false
			}
		}
		if ft.Kind() != reflect.Struct || !si.add(ft, path, depth+1) {
			return false
		}
	}
	return true
}

// isEmpty reports whether omitempty drops v, as the converter decides.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Map, reflect.Slice:
		return v.IsNil() || v.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// resolve follows path from struct value v and returns the named field, or
// false when the converter leaves it out.
func resolve(v reflect.Value, path []fieldStep) (reflect.Value, bool) {
	for i, st := range path {
		f := v.Field(st.index)
		if st.omitempty && isEmpty(f) {
			return reflect.Value{}, false
		}
		if st.omitzero != nil && st.omitzero(f) {
			return reflect.Value{}, false
		}
		if i == len(path)-1 {
			return f, true
		}
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				return reflect.Value{}, false
			}
			f = f.Elem()
		}
		v = f
	}
	return reflect.Value{}, false
}

// typedMap is a lazy CEL map over a struct (info set) or a Go map with
// string keys (info nil). It behaves as the ordered map over the converted
// map[string]any does.
type typedMap struct {
	v    reflect.Value
	info *structInfo
	// set adds or replaces top-level string fields (structs only).
	set map[string]string
	// strMap is v itself when v is a map[string]string (labels, data),
	// read without reflection.
	strMap map[string]string
	// tags and vals hold the first converted entries read (nil vals for
	// absent ones) inline, since expressions read few entries of each
	// map. A struct's field names[i] is in vals[k] when tags[k] is i+1,
	// so four fit; a Go map's entry is the key and the value in vals[k]
	// and vals[k+1] when tags[k] is set for an even k, so two fit.
	tags [inlineCache]uint16
	vals [inlineCache]ref.Val
	// ext holds what few maps need: more cached entries, the sorted keys.
	ext *typedMapExt
}

// typedMapExt is the rarely needed part of a typedMap, kept out of line so
// that the many maps an evaluation touches stay small.
type typedMapExt struct {
	// more, then cacheMap once more has listCache entries, hold the
	// converted entries that do not fit inline, by name.
	more     []cachedField
	cacheMap map[string]ref.Val
	keys     []string
	// keysDone tells whether keys has been computed.
	keysDone bool
	// buf is more's first backing array, allocated with the ext rather
	// than by the first appends.
	buf [extCache]cachedField
}

// cachedField is a converted entry (nil: absent).
type cachedField struct {
	name string
	val  ref.Val
}

// inlineCache is how many values typedMap holds inline; more entries go
// to a list (its first extCache in the ext itself) up to listCache, then
// to a map.
const (
	inlineCache = 4
	extCache    = 4
	listCache   = 32
)

// extra returns m's out-of-line part, allocating it on first use.
func (m *typedMap) extra() *typedMapExt {
	if m.ext == nil {
		m.ext = &typedMapExt{}
	}
	return m.ext
}

// cached returns the entry name holds in the ext, if it holds one.
func (x *typedMapExt) cached(name string) (ref.Val, bool) {
	if x.cacheMap != nil {
		v, ok := x.cacheMap[name]
		return v, ok
	}
	for _, c := range x.more {
		if c.name == name {
			return c.val, true
		}
	}
	return nil, false
}

// remember caches v, the entry of name, in the ext.
func (x *typedMapExt) remember(name string, v ref.Val) {
	switch {
	case x.cacheMap != nil:
		x.cacheMap[name] = v
	case len(x.more) < listCache:
		if x.more == nil {
			x.more = x.buf[:0]
		}
		x.more = append(x.more, cachedField{name, v})
	default:
		x.cacheMap = make(map[string]ref.Val, 2*listCache)
		for _, c := range x.more {
			x.cacheMap[c.name] = c.val
		}
		x.cacheMap[name] = v
		x.more, x.buf = nil, [extCache]cachedField{}
	}
}

var (
	_ traits.Mapper = (*typedMap)(nil)
	_ traits.Zeroer = (*typedMap)(nil)
	_ traits.Lister = (*typedList)(nil)
	_ traits.Zeroer = (*typedList)(nil)
)

// lookup returns the converted value of name; key is name as a CEL
// string, which a Go map keeps in its cache.
func (m *typedMap) lookup(name string, key ref.Val) (ref.Val, bool) {
	if m.info == nil {
		return m.entry(name, key)
	}
	// Fields read before are found without hashing name.
	k := 0
	for ; k < inlineCache && m.tags[k] != 0; k++ {
		if m.info.names[m.tags[k]-1] == name {
			return m.vals[k], m.vals[k] != nil
		}
	}
	if m.ext != nil {
		if v, ok := m.ext.cached(name); ok {
			return v, v != nil
		}
	}
	var out ref.Val
	i := m.info.index(name)
	if i >= 0 {
		out = m.field(i)
	} else if s, ok := m.set[name]; ok {
		out = types.String(s)
	}
	if i >= 0 && i < math.MaxUint16 && k < inlineCache {
		m.tags[k], m.vals[k] = uint16(i+1), out
	} else {
		// Names that are not fields (only set has them) and fields
		// beyond what tags tell apart are cached by name.
		m.extra().remember(name, out)
	}
	return out, out != nil
}

// field converts the struct field names[i], set's value if set has it;
// nil if absent.
func (m *typedMap) field(i int) ref.Val {
	if s, ok := m.set[m.info.names[i]]; ok {
		return types.String(s)
	}
	paths := m.info.fields[i]
	for j := len(paths) - 1; j >= 0; j-- {
		if f, ok := resolve(m.v, paths[j]); ok {
			return fieldValue(f, paths[j][len(paths[j])-1].plan)
		}
	}
	return nil
}

// entry is lookup for a Go map.
func (m *typedMap) entry(name string, key ref.Val) (ref.Val, bool) {
	k := 0
	for ; k < inlineCache && m.tags[k] != 0; k += 2 {
		if string(m.vals[k].(types.String)) == name {
			return m.vals[k+1], m.vals[k+1] != nil
		}
	}
	if m.ext != nil {
		if v, ok := m.ext.cached(name); ok {
			return v, v != nil
		}
	}
	var out ref.Val
	if m.strMap != nil {
		if str, ok := m.strMap[name]; ok {
			out = types.String(str)
		}
	} else {
		// key holds name already: reflecting on it allocates nothing.
		e := m.v.MapIndex(reflect.ValueOf(key).Convert(m.v.Type().Key()))
		if e.IsValid() {
			out = planOf(e.Type()).convert(e)
		}
	}
	if k < inlineCache {
		m.tags[k], m.vals[k], m.vals[k+1] = 1, key, out
	} else {
		m.extra().remember(name, out)
	}
	return out, out != nil
}

// present reports whether the converted map has names[i], without
// converting.
func (m *typedMap) present(i int) bool {
	if _, ok := m.set[m.info.names[i]]; ok {
		return true
	}
	for _, p := range m.info.fields[i] {
		if _, ok := resolve(m.v, p); ok {
			return true
		}
	}
	return false
}

// sortedKeys returns the keys of the converted map in sorted order.
func (m *typedMap) sortedKeys() []string {
	x := m.extra()
	if x.keysDone {
		return x.keys
	}
	x.keysDone = true
	if m.info == nil {
		keys := make([]string, 0, m.v.Len())
		for _, k := range m.v.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		x.keys = keys
		return keys
	}
	keys := make([]string, 0, len(m.info.names)+len(m.set))
	for i, n := range m.info.names {
		if m.present(i) {
			keys = append(keys, n)
		}
	}
	for n := range m.set {
		if m.info.index(n) < 0 {
			keys = append(keys, n)
		}
	}
	slices.Sort(keys)
	x.keys = keys
	return keys
}

// Find returns the value of a string key, as cel-go's map over
// map[string]any does: other key types are not found.
func (m *typedMap) Find(key ref.Val) (ref.Val, bool) {
	s, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	return m.lookup(string(s), key)
}

// Get returns the value of key or a "no such key" error.
func (m *typedMap) Get(key ref.Val) ref.Val {
	v, found := m.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}

// Contains reports whether key is a key of the map.
func (m *typedMap) Contains(key ref.Val) ref.Val {
	_, found := m.Find(key)
	return types.Bool(found)
}

// Size returns the number of keys.
func (m *typedMap) Size() ref.Val {
	if m.info == nil {
		return types.Int(m.v.Len())
	}
	return types.Int(len(m.sortedKeys()))
}

// IsZeroValue reports whether the map is empty.
func (m *typedMap) IsZeroValue() bool { return m.Size() == types.IntZero }

// Iterator yields the keys in sorted order.
func (m *typedMap) Iterator() traits.Iterator {
	return &sortedKeyIterator{keys: m.sortedKeys()}
}

// Equal compares with another map as cel-go's maps do.
func (m *typedMap) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if m.Size() != o.Size() {
		return types.False
	}
	for _, k := range m.sortedKeys() {
		key := types.String(k)
		mine, _ := m.Find(key)
		theirs, found := o.Find(key)
		if !found {
			return types.False
		}
		if types.Equal(mine, theirs) == types.False {
			return types.False
		}
	}
	return types.True
}

// ConvertToType converts to map or type as cel-go's maps do.
func (m *typedMap) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return m
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", types.MapType, t)
}

// ConvertToNative converts the whole converted map.
func (m *typedMap) ConvertToNative(t reflect.Type) (any, error) {
	v, err := m.eager()
	if err != nil {
		return nil, err
	}
	return v.ConvertToNative(t)
}

// Type returns the map type.
func (m *typedMap) Type() ref.Type { return types.MapType }

// Value returns the converted map[string]any (nil if conversion fails).
func (m *typedMap) Value() any {
	n, err := materialize(m)
	if err != nil {
		return nil
	}
	return n
}

// String renders the map as cel-go renders the converted map.
func (m *typedMap) String() string {
	v, err := m.eager()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(v)
}

func (m *typedMap) eager() (ref.Val, error) {
	n, err := materialize(m)
	if err != nil {
		return nil, err
	}
	return jsonAdapter().NativeToValue(n), nil
}

// typedList is a lazy CEL list over a Go slice.
type typedList struct {
	v     reflect.Value
	cache []ref.Val
}

// structBlock is how many struct elements of a list at converts with one
// allocation: iterations read every element, an index read only one, so
// blocks stay small.
const structBlock = 8

func (l *typedList) at(i int) ref.Val {
	if l.cache == nil {
		l.cache = make([]ref.Val, l.v.Len())
	}
	if v := l.cache[i]; v != nil {
		return v
	}
	// The plan is looked up rather than kept, which would take
	// typedList to a larger size class.
	p := planOf(l.v.Type().Elem())
	if p.info != nil && !p.info.eager {
		// Convert the struct elements from i on together, as
		// p.convert would one by one.
		block := make([]typedMap, min(structBlock, len(l.cache)-i))
		for j := range block {
			if l.cache[i+j] == nil {
				block[j] = typedMap{v: l.v.Index(i + j), info: p.info}
				l.cache[i+j] = &block[j]
			}
		}
		return l.cache[i]
	}
	v := p.convert(l.v.Index(i))
	l.cache[i] = v
	return v
}

// Get returns the element at index, with cel-go's list errors.
func (l *typedList) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if i < 0 || i >= l.v.Len() {
		return types.NewErr("index '%d' out of range in list size '%d'", i, l.Size())
	}
	return l.at(i)
}

// Size returns the number of elements.
func (l *typedList) Size() ref.Val { return types.Int(l.v.Len()) }

// IsZeroValue reports whether the list is empty.
func (l *typedList) IsZeroValue() bool { return l.v.Len() == 0 }

// Contains reports whether an element equals elem.
func (l *typedList) Contains(elem ref.Val) ref.Val {
	for i := range l.v.Len() {
		if b, ok := elem.Equal(l.at(i)).(types.Bool); ok && b == types.True {
			return types.True
		}
	}
	return types.False
}

// Equal compares with another list as cel-go's lists do.
func (l *typedList) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	if l.Size() != o.Size() {
		return types.False
	}
	for i := range l.v.Len() {
		if types.Equal(l.at(i), o.Get(types.Int(i))) == types.False {
			return types.False
		}
	}
	return types.True
}

// Add concatenates as cel-go's lists do.
func (l *typedList) Add(other ref.Val) ref.Val {
	if _, ok := other.(traits.Lister); !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	v, err := l.eager()
	if err != nil {
		return types.NewErr("%v", err)
	}
	return v.(traits.Adder).Add(other)
}

// Iterator yields the elements in order.
func (l *typedList) Iterator() traits.Iterator { return &typedListIterator{l: l} }

// ConvertToType converts to list or type as cel-go's lists do.
func (l *typedList) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.ListType:
		return l
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", types.ListType, t)
}

// ConvertToNative converts the whole converted list.
func (l *typedList) ConvertToNative(t reflect.Type) (any, error) {
	v, err := l.eager()
	if err != nil {
		return nil, err
	}
	return v.ConvertToNative(t)
}

// Type returns the list type.
func (l *typedList) Type() ref.Type { return types.ListType }

// Value returns the converted []any (nil if conversion fails).
func (l *typedList) Value() any {
	n, err := materialize(l)
	if err != nil {
		return nil
	}
	return n
}

// String renders the list as cel-go renders the converted list.
func (l *typedList) String() string {
	v, err := l.eager()
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(v)
}

func (l *typedList) eager() (ref.Val, error) {
	n, err := materialize(l)
	if err != nil {
		return nil, err
	}
	return jsonAdapter().NativeToValue(n), nil
}

type typedListIterator struct {
	l *typedList
	i int
}

func (it *typedListIterator) HasNext() ref.Val { return types.Bool(it.i < it.l.v.Len()) }

func (it *typedListIterator) Next() ref.Val {
	if it.i >= it.l.v.Len() {
		return nil
	}
	v := it.l.at(it.i)
	it.i++
	return v
}

func (it *typedListIterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}

func (it *typedListIterator) ConvertToType(ref.Type) ref.Val {
	return types.NewErr("type conversion on iterators not supported")
}

func (it *typedListIterator) Equal(ref.Val) ref.Val { return types.NewErr("no such overload") }

func (it *typedListIterator) Type() ref.Type { return types.IteratorType }

func (it *typedListIterator) Value() any { return nil }

// materialize returns the JSON-shaped Go value of a converted CEL value.
func materialize(v ref.Val) (any, error) {
	switch x := v.(type) {
	case *typedMap:
		keys := x.sortedKeys()
		out := make(map[string]any, len(keys))
		for _, k := range keys {
			e, _ := x.lookup(k, types.String(k))
			n, err := materialize(e)
			if err != nil {
				return nil, err
			}
			out[k] = n
		}
		return out, nil
	case *typedList:
		out := make([]any, x.v.Len())
		for i := range out {
			n, err := materialize(x.at(i))
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case *types.Err:
		return nil, x
	case types.Null:
		return nil, nil
	case *orderedMap:
		return x.m, nil
	}
	return v.Value(), nil
}
