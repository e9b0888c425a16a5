package celvalue

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Path leads from an input variable to the values whose sizes an
// expression's cost estimate depends on: field names, and [Wildcard] for
// any element of a list or any key or value of a map. Paths are interned
// by a [PathTable] and never change afterwards.
type Path struct {
	// Root identifies the input variable; its meaning is the caller's.
	Root uint8
	// Fields are the steps.
	Fields []string
	// keys are the fields as CEL strings, boxed once; nil for a wildcard.
	keys []ref.Val
	// id numbers the path in its table, for Sizes; -1 when not numbered.
	id int32
	// stem is the path of the field steps this one starts with (see
	// PathTable.intern), or nil.
	stem *Path
	// typed is the path's sizer for typed objects (see typedPathSizes),
	// compiled on first use.
	typed atomic.Pointer[typedPlan]
}

// Wildcard stands for every element, key or value of a list or map.
const Wildcard = "@"

// PathKey identifies the path of root and fields.
func PathKey(root uint8, fields []string) string {
	return string(rune('0'+root)) + "\x00" + strings.Join(fields, "\x00")
}

// maxPathIDs bounds the paths a table numbers, and so the memory of a
// Sizes; paths interned after that are sized without memo.
const maxPathIDs = 4096

// PathTable numbers paths, so that equal paths in every program of an
// environment share one ID (and one entry of a Sizes). It is safe for
// concurrent use; its zero value is ready to use.
type PathTable struct {
	mu  sync.Mutex
	ids map[string]*Path
}

// Intern returns the shared path of root and fields.
func (t *PathTable) Intern(root uint8, fields []string) *Path {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.intern(PathKey(root, fields), root, fields)
}

// intern is Intern with t.mu held. A new path gets its stem: the path of
// the field steps it starts with, up to its first wildcard or its last
// step, when there are any.
func (t *PathTable) intern(key string, root uint8, fields []string) *Path {
	if q, ok := t.ids[key]; ok {
		return q
	}
	p := &Path{Root: root, Fields: slices.Clone(fields), keys: make([]ref.Val, len(fields))}
	for i, f := range fields {
		if f != Wildcard {
			p.keys[i] = types.String(f)
		}
	}
	k := len(p.Fields) - 1
	if i := slices.Index(p.Fields, Wildcard); i >= 0 {
		k = i
	}
	if k > 0 {
		stem := p.Fields[:k:k]
		p.stem = t.intern(PathKey(root, stem), root, stem)
	}
	if len(t.ids) >= maxPathIDs {
		p.id = -1
		return p
	}
	if t.ids == nil {
		t.ids = map[string]*Path{}
	}
	p.id = int32(len(t.ids))
	t.ids[key] = p
	return p
}

// sizesAt returns the largest size of the values at path's steps from
// step on, starting at v, as CEL's cost model measures a value's size (not
// what it holds). Steps are followed as selections follow fields: a
// missing field or a null holds nothing an expression can read and adds
// nothing. It returns false for values of forms it does not read.
func sizesAt(v any, path *Path, step int) (uint64, bool) {
	for ; step < len(path.Fields); step++ {
		if path.keys[step] == nil {
			return wildcardSizes(Resolve(v), path, step)
		}
		var st stepResult
		if v, st = selectStep(v, path, step); st != stepFound {
			return 0, st == stepAbsent
		}
	}
	return ownSize(v)
}

type stepResult uint8

const (
	stepFound stepResult = iota
	// stepAbsent: nothing is there (a missing field, a null).
	stepAbsent
	// stepUnknown: a value selectStep does not read.
	stepUnknown
)

// selectStep selects path's field at step from v, as a selection would.
func selectStep(v any, path *Path, step int) (any, stepResult) {
	switch m := Resolve(v).(type) {
	case nil, types.Null:
		return nil, stepAbsent
	case map[string]any:
		c, ok := m[path.Fields[step]]
		if !ok {
			return nil, stepAbsent
		}
		return c, stepFound
	case traits.Mapper:
		c, ok := m.Find(path.keys[step])
		switch {
		case !ok:
			return nil, stepAbsent
		case types.IsError(c):
			return nil, stepUnknown
		}
		return c, stepFound
	}
	return nil, stepUnknown
}

// valueAt follows the field steps of path from v.
func valueAt(v any, path *Path) (any, stepResult) {
	for step := range path.Fields {
		var st stepResult
		if v, st = selectStep(v, path, step); st != stepFound {
			return nil, st
		}
	}
	return v, stepFound
}

// wildcardSizes is sizesAt for a wildcard at step: every element of a
// list, every value of a map and, when the path ends there, its keys.
func wildcardSizes(v any, path *Path, step int) (uint64, bool) {
	last := step == len(path.Fields)-1
	var b uint64
	each := func(e any) bool {
		x, ok := sizesAt(e, path, step+1)
		b = max(b, x)
		return ok
	}
	switch m := v.(type) {
	case nil, types.Null:
		return 0, true
	case []any:
		for _, e := range m {
			if !each(e) {
				return 0, false
			}
		}
	case map[string]any:
		for k, e := range m {
			if last {
				b = max(b, uint64(len(k)))
			}
			if !each(e) {
				return 0, false
			}
		}
	case *typedList:
		// As the Lister case, without boxing each index.
		for i := range m.v.Len() {
			if !each(m.at(i)) {
				return 0, false
			}
		}
	case traits.Lister:
		n, ok := m.Size().(types.Int)
		if !ok {
			return 0, false
		}
		for i := range int64(n) {
			if !each(m.Get(types.Int(i))) {
				return 0, false
			}
		}
	case traits.Mapper:
		kb, ok := mapperSizes(m, last, each)
		if !ok {
			return 0, false
		}
		b = max(b, kb)
	default:
		return 0, false
	}
	return b, true
}

// mapperSizes is wildcardSizes for a CEL map: each visits every value, and
// the keys count too when last is set.
func mapperSizes(m traits.Mapper, last bool, each func(any) bool) (uint64, bool) {
	var b uint64
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		if last {
			x, ok := ownSize(k)
			if !ok {
				return 0, false
			}
			b = max(b, x)
		}
		if !each(m.Get(k)) {
			return 0, false
		}
	}
	return b, true
}

// ownSize is the size CEL's cost model gives v: the length of a string or
// bytes, the number of elements or entries of a list or map, nothing for
// other values. It returns false for values of forms it does not know.
func ownSize(v any) (uint64, bool) {
	switch x := v.(type) {
	case nil, bool, int64, float64, types.Null, types.Bool, types.Int, types.Uint, types.Double:
		return 0, true
	case string:
		return uint64(len(x)), true
	case []byte:
		return uint64(len(x)), true
	case []any:
		return uint64(len(x)), true
	case map[string]any:
		return uint64(len(x)), true
	case types.String:
		return uint64(len(x)), true
	case types.Bytes:
		return uint64(len(x)), true
	case traits.Sizer:
		return sizeOfSize(x.Size()), true
	case *types.Optional:
		if x.HasValue() {
			return ownSize(x.GetValue())
		}
		return 0, true
	case ref.Val:
		if types.IsError(x) {
			return 0, false
		}
		return 0, true // scalars, optionals without value, types
	}
	return 0, false
}
