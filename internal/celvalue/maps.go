package celvalue

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"
)

// typedMap is a lazy CEL map over a struct (info set) or a Go map with
// string keys (info nil). It behaves as the ordered map over the converted
// map[string]any does.
type typedMap struct {
	v    reflect.Value
	info *structInfo
	// flags tell where strs finds its map (see strs).
	flags uint8
	// tags, kinds and data hold the first converted entries read (nil
	// for absent ones) inline, since expressions read few entries of each
	// map. A struct's field names[i] is in slot k when tags[k] is i+1,
	// so six fit (a container's image, name, resources, securityContext
	// and probes); a Go map's entry is the key and the value in slots k
	// and k+1 when tags[k] is set for an even k, so three fit. A slot
	// holds a value as the data word of its interface and the kind of
	// its dynamic type (see inlineVals): a whole interface per slot would
	// take typedMap from 112 to 160 bytes, and typed objects are made of
	// typedMaps.
	tags  [inlineCache]uint16
	kinds [inlineCache]uint8
	data  [inlineCache]unsafe.Pointer
	// ext holds what few maps need: more cached entries, the sorted keys.
	ext *typedMapExt
}

// Flags of a typedMap.
const (
	// mapWithSet: the typedMap is the first field of a typedSetMap.
	mapWithSet uint8 = 1 + iota
	// mapOfStrings: v is a map[string]string.
	mapOfStrings
)

// typedSetMap is a typedMap over a struct with top-level string fields
// added or replaced (see TypedObject): only the objects themselves have
// them, so their map lives beside the typedMap rather than in every one.
type typedSetMap struct {
	typedMap
	set map[string]string
}

// strs returns, for a struct (info set), the top-level string fields
// that are added or replaced; for a Go map (info nil), v itself when v is
// a map[string]string (labels, data), read without reflection; else nil.
func (m *typedMap) strs() map[string]string {
	switch m.flags {
	case 0:
		return nil
	case mapWithSet:
		return (*typedSetMap)(unsafe.Pointer(m)).set
	}
	p := m.v.UnsafePointer() // a map value is its map pointer
	return *(*map[string]string)(unsafe.Pointer(&p))
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
	inlineCache = 6
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

var resourceListType = reflect.TypeFor[corev1.ResourceList]()

var (
	_ traits.Mapper = (*typedMap)(nil)
	_ traits.Zeroer = (*typedMap)(nil)
)

// lookup returns the converted value of name; key is name as a CEL
// string, which a Go map keeps in its cache.
func (m *typedMap) lookup(name string, key ref.Val) (ref.Val, bool) {
	return m.lookupIn(name, key, nil)
}

// lookupIn is lookup reading names[0]'s entry on the way to the entries
// names[1:] of it (see SelectPath): the struct fields it converts take
// their typedMaps from spare, allocated for the whole chain at the first
// one that is not cached yet.
func (m *typedMap) lookupIn(name string, key ref.Val, chain *pathChain) (ref.Val, bool) {
	if m.info == nil {
		return m.entry(name, key)
	}
	// Fields read before are found without hashing name.
	k := 0
	for ; k < inlineCache && m.tags[k] != 0; k++ {
		if m.info.names[m.tags[k]-1] == name {
			v := m.slot(k)
			return v, v != nil
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
		out = m.fieldIn(i, chain)
	} else if s, ok := m.strs()[name]; ok {
		out = types.String(s)
	}
	if i >= 0 && i < math.MaxUint16 && k < inlineCache && m.setSlot(k, out) {
		m.tags[k] = uint16(i + 1)
	} else {
		// Names that are not fields (only set has them) and fields
		// beyond what tags tell apart are cached by name.
		m.extra().remember(name, out)
	}
	return out, out != nil
}

// field converts the struct field names[i], set's value if set has it;
// nil if absent.
func (m *typedMap) field(i int) ref.Val { return m.fieldIn(i, nil) }

// fieldIn is field taking the typedMap of a struct field from chain.
func (m *typedMap) fieldIn(i int, chain *pathChain) ref.Val {
	if s, ok := m.strs()[m.info.names[i]]; ok {
		return types.String(s)
	}
	paths := m.info.fields[i]
	for j := len(paths) - 1; j >= 0; j-- {
		if f, ok := resolve(m.v, paths[j]); ok {
			plan := paths[j][len(paths[j])-1].plan
			if chain != nil {
				if t := chain.take(f, plan); t != nil {
					return t
				}
			}
			return fieldValue(f, plan)
		}
	}
	return nil
}

// entry is lookup for a Go map.
func (m *typedMap) entry(name string, key ref.Val) (ref.Val, bool) {
	k := 0
	for ; k < inlineCache && m.tags[k] != 0; k += 2 {
		if *(*string)(m.data[k]) == name { // a key: a types.String
			v := m.slot(k + 1)
			return v, v != nil
		}
	}
	if m.ext != nil {
		if v, ok := m.ext.cached(name); ok {
			return v, v != nil
		}
	}
	var out ref.Val
	if m.strs() != nil {
		if str, ok := m.strs()[name]; ok {
			out = types.String(str)
		}
	} else if m.v.Type() == resourceListType && m.v.CanInterface() {
		// Resource lists are read often (limits, requests): index the
		// map itself rather than copying the Quantity out through
		// reflect and converting it as any custom converter.
		if q, ok := m.v.Interface().(corev1.ResourceList)[corev1.ResourceName(name)]; ok {
			out = types.String(q.String())
		}
	} else {
		// key holds name already: reflecting on it allocates nothing.
		e := m.v.MapIndex(reflect.ValueOf(key).Convert(m.v.Type().Key()))
		if e.IsValid() {
			out = infoOf(e.Type()).convert(e)
		}
	}
	if k < inlineCache && m.setSlot(k, key) && m.setSlot(k+1, out) {
		m.tags[k] = 1
	} else {
		if k < inlineCache {
			// Undo a slot set before one failed.
			m.kinds[k], m.data[k], m.kinds[k+1], m.data[k+1] = 0, nil, 0, nil
		}
		m.extra().remember(name, out)
	}
	return out, out != nil
}

// present reports whether the converted map has names[i], without
// converting.
func (m *typedMap) present(i int) bool {
	if _, ok := m.strs()[m.info.names[i]]; ok {
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
	keys := make([]string, 0, len(m.info.names)+len(m.strs()))
	for i, n := range m.info.names {
		if m.present(i) {
			keys = append(keys, n)
		}
	}
	for n := range m.strs() {
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
	if s, ok := key.(types.String); ok && m.info == nil {
		// String maps and resource lists hold a value for every key:
		// look the key up without converting the value.
		switch {
		case m.strs() != nil:
			_, found := m.strs()[string(s)]
			return types.Bool(found)
		case m.v.Type() == resourceListType && m.v.CanInterface():
			_, found := m.v.Interface().(corev1.ResourceList)[corev1.ResourceName(s)]
			return types.Bool(found)
		}
	}
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

// iface is the layout of a non-empty interface value such as a ref.Val:
// its itab, which names the dynamic type, and its data word.
type iface struct {
	tab  unsafe.Pointer
	data unsafe.Pointer
}

// inlineVals are values of the dynamic types a typedMap slot holds, one
// per kind (kind i+1 is the type of inlineVals[i]): what conversions give
// for fields and entries. Values of other types go to the ext.
var inlineVals = [...]ref.Val{
	(*typedMap)(nil), (*typedList)(nil), types.String(""), types.Int(0), types.Bool(false),
	types.Double(0), types.NullValue, types.Uint(0), types.Bytes(nil), (*types.Err)(nil), (*orderedMap)(nil),
}

// inlineTabs are the itabs of inlineVals.
var inlineTabs = func() (tabs [len(inlineVals)]unsafe.Pointer) {
	for i := range inlineVals {
		tabs[i] = (*iface)(unsafe.Pointer(&inlineVals[i])).tab
	}
	return tabs
}()

// slot returns the value in inline slot k (nil for an absent entry).
func (m *typedMap) slot(k int) ref.Val {
	kind := m.kinds[k]
	if kind == 0 {
		return nil
	}
	var v ref.Val
	*(*iface)(unsafe.Pointer(&v)) = iface{tab: inlineTabs[kind-1], data: m.data[k]}
	return v
}

// setSlot stores v in inline slot k, reporting false for a value of a
// type no kind stands for.
func (m *typedMap) setSlot(k int, v ref.Val) bool {
	if v == nil {
		m.kinds[k], m.data[k] = 0, nil
		return true
	}
	w := (*iface)(unsafe.Pointer(&v))
	for i, tab := range inlineTabs {
		if tab == w.tab {
			m.kinds[k], m.data[k] = uint8(i+1), w.data
			return true
		}
	}
	return false
}
