package celenv

import (
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

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
// struct or a pointer to one.
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
	entry := value.TypeReflectEntryOf(v.Type())
	if entry.CanConvertToUnstructured() {
		u, err := entry.ToUnstructured(v)
		if err != nil {
			return types.NewErr("%v", err)
		}
		if u == nil {
			return types.NullValue
		}
		return jsonAdapter().NativeToValue(u)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return types.NullValue
		}
		return convertValue(v.Elem())
	case reflect.Map:
		if v.IsNil() {
			return types.NullValue
		}
		if v.Type().Key().Kind() != reflect.String {
			return types.NewErr("cannot convert map to: %v", reflect.Interface)
		}
		m := &typedMap{v: v}
		if v.Type() == stringMapType {
			m.strMap = v.Interface().(map[string]string)
		}
		return m
	case reflect.Slice:
		if v.IsNil() {
			return types.NullValue
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return types.String(base64.StdEncoding.EncodeToString(v.Bytes()))
		}
		return &typedList{v: v}
	case reflect.Struct:
		return structValue(v)
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

// fieldValue converts a struct field's value.
func fieldValue(f reflect.Value) ref.Val {
	switch f.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return primitiveValue(f)
	}
	return convertValue(f)
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
	}
	actual, _ := structInfos.LoadOrStore(t, si)
	return actual.(*structInfo)
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
	// small and cacheMap hold the converted fields read so far: a few
	// inline, since expressions read few fields of each map, then a map.
	small  [smallCache]cachedField
	nsmall uint8
	// ext holds what few maps need: more cached fields, the sorted keys.
	ext *typedMapExt
}

// typedMapExt is the rarely needed part of a typedMap, kept out of line so
// that the many maps an evaluation touches stay small.
type typedMapExt struct {
	more     []cachedField
	cacheMap map[string]ref.Val
	keys     []string
	// keysDone tells whether keys has been computed.
	keysDone bool
}

// extra returns m's out-of-line part, allocating it on first use.
func (m *typedMap) extra() *typedMapExt {
	if m.ext == nil {
		m.ext = &typedMapExt{}
	}
	return m.ext
}

var (
	_ traits.Mapper = (*typedMap)(nil)
	_ traits.Zeroer = (*typedMap)(nil)
	_ traits.Lister = (*typedList)(nil)
	_ traits.Zeroer = (*typedList)(nil)
)

// lookup returns the converted value of name.
func (m *typedMap) lookup(name string) (ref.Val, bool) {
	if m.ext != nil && m.ext.cacheMap != nil {
		if v, ok := m.ext.cacheMap[name]; ok {
			return v, v != nil
		}
	} else {
		for _, c := range m.small[:m.nsmall] {
			if c.name == name {
				return c.val, c.val != nil
			}
		}
		if m.ext != nil {
			for _, c := range m.ext.more {
				if c.name == name {
					return c.val, c.val != nil
				}
			}
		}
	}
	var out ref.Val
	if s, ok := m.set[name]; ok {
		out = types.String(s)
	} else if m.strMap != nil {
		if str, ok := m.strMap[name]; ok {
			out = types.String(str)
		}
	} else if m.info == nil {
		e := m.v.MapIndex(reflect.ValueOf(name).Convert(m.v.Type().Key()))
		if e.IsValid() {
			out = convertValue(e)
		}
	} else {
		paths := m.info.paths[name]
		for i := len(paths) - 1; i >= 0; i-- {
			if f, ok := resolve(m.v, paths[i]); ok {
				out = fieldValue(f)
				break
			}
		}
	}
	m.remember(name, out)
	return out, out != nil
}

// cachedField is a converted field (nil: absent).
type cachedField struct {
	name string
	val  ref.Val
}

// smallCache is how many fields typedMap holds inline; more go to a list
// up to listCache, then to a map.
const (
	smallCache = 2
	listCache  = 32
)

func (m *typedMap) remember(name string, v ref.Val) {
	if int(m.nsmall) < smallCache && m.ext == nil {
		m.small[m.nsmall] = cachedField{name, v}
		m.nsmall++
		return
	}
	x := m.extra()
	switch {
	case x.cacheMap != nil:
		x.cacheMap[name] = v
	case len(x.more) < listCache:
		x.more = append(x.more, cachedField{name, v})
	default:
		x.cacheMap = make(map[string]ref.Val, 2*listCache)
		for _, c := range m.small[:m.nsmall] {
			x.cacheMap[c.name] = c.val
		}
		for _, c := range x.more {
			x.cacheMap[c.name] = c.val
		}
		x.cacheMap[name] = v
		m.small, m.nsmall, x.more = [smallCache]cachedField{}, 0, nil
	}
}

// present reports whether the converted map has name, without converting.
func (m *typedMap) present(name string) bool {
	if _, ok := m.set[name]; ok {
		return true
	}
	for _, p := range m.info.paths[name] {
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
	for _, n := range m.info.names {
		if m.present(n) {
			keys = append(keys, n)
		}
	}
	for n := range m.set {
		if _, ok := m.info.paths[n]; !ok {
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
	return m.lookup(string(s))
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

func (l *typedList) at(i int) ref.Val {
	if l.cache == nil {
		l.cache = make([]ref.Val, l.v.Len())
	}
	if v := l.cache[i]; v != nil {
		return v
	}
	v := convertValue(l.v.Index(i))
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
			e, _ := x.lookup(k)
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
