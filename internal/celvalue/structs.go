package celvalue

import (
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// fieldStep is one struct field on the way to a JSON field: inlined
// (embedded) fields first, the named field last.
type fieldStep struct {
	index     int
	omitempty bool
	omitzero  func(reflect.Value) bool
	// plan is the plan of the named field's type (last step only).
	plan *typeInfo
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

// newStructInfo works out the layout of struct type t.
func newStructInfo(t reflect.Type) *structInfo {
	si := &structInfo{paths: map[string][][]fieldStep{}}
	if !si.add(t, nil, 0) {
		return &structInfo{eager: true}
	}
	for n := range si.paths {
		si.names = append(si.names, n)
	}
	slices.Sort(si.names)
	si.fields = make([][][]fieldStep, len(si.names))
	for i, n := range si.names {
		si.fields[i] = si.paths[n]
	}
	si.table = newNameTable(si.names)
	return si
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
			step.plan = infoOf(sf.Type)
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
