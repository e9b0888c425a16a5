package celvalue

import (
	"reflect"
	"unsafe"
)

// Sizes remembers the size bounds worked out for the inputs of one
// request, so that the evaluations of its policies size each path once:
// the images at object.spec.template.spec.containers[*].image are the
// same for every policy that reads them. The zero value is ready to use;
// a nil *Sizes remembers nothing. A Sizes belongs to one goroutine; call
// Reset before reusing it for another request, whose values may sit at
// the same addresses.
type Sizes struct {
	// byPath is indexed by the paths' IDs; an entry holds for the root
	// value at root (nil: empty).
	byPath []pathEntry
	// stems, indexed like byPath, hold the values at the paths that are
	// the field steps other paths start with.
	stems []stemEntry
	// values are whole input values sized, by identity.
	values []valueEntry
	// used are the IDs whose byPath or stems entries this request set:
	// Reset clears them, and only them, so that no entry outlives its
	// request (neither matching a later one's values nor pinning its
	// own) and resetting costs what the request used.
	used []int32
}

type stemEntry struct {
	root unsafe.Pointer
	v    any
	st   stepResult
}

type pathEntry struct {
	root  unsafe.Pointer
	bound uint64
}

type valueEntry struct {
	key   unsafe.Pointer
	bound uint64
}

// Reset forgets every size, keeping the memory for the next request.
func (s *Sizes) Reset() {
	clear(s.values)
	s.values = s.values[:0]
	for _, id := range s.used {
		if int(id) < len(s.byPath) {
			s.byPath[id] = pathEntry{}
		}
		if int(id) < len(s.stems) {
			s.stems[id] = stemEntry{}
		}
	}
	s.used = s.used[:0]
}

// identity returns what identifies v for the memo: the address of its map
// or pointer, or nil for values that have none (strings, lists, scalars),
// which are sized every time.
func identity(v any) unsafe.Pointer {
	if m, ok := v.(*typedMap); ok {
		// Typed objects, the common input, without reflect.
		return unsafe.Pointer(m)
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Map, reflect.Pointer:
		return rv.UnsafePointer()
	}
	return nil
}

// bound returns SizeBound(v), remembered by v's identity.
func (s *Sizes) bound(v any) uint64 {
	v = Resolve(v)
	if v == nil {
		return 0
	}
	if s == nil {
		return SizeBound(v)
	}
	key := identity(v)
	if key != nil {
		for _, e := range s.values {
			if e.key == key {
				return e.bound
			}
		}
	}
	b := SizeBound(v)
	if key != nil {
		s.values = append(s.values, valueEntry{key: key, bound: b})
	}
	return b
}

// PathBound returns the largest size at the end of path in the input
// root, or the [SizeBound] of the whole root when the path cannot be
// followed, remembered by path and the root's identity.
func (s *Sizes) PathBound(path *Path, root any) uint64 {
	root = Resolve(root)
	var key unsafe.Pointer
	if s != nil {
		if key = identity(root); path.id < 0 {
			key = nil
		} else if key != nil && int(path.id) < len(s.byPath) {
			if e := s.byPath[path.id]; e.root == key {
				return e.bound
			}
		}
	}
	// Typed objects are sized in place where their paths allow.
	b, ok, done := typedPathSizes(path, root)
	switch {
	case done:
	case path.stem != nil:
		switch v, st := s.stemValue(path.stem, root, key); st {
		case stepFound:
			b, ok = sizesAt(v, path, len(path.stem.Fields))
		case stepAbsent:
			b, ok = 0, true
		}
	default:
		b, ok = sizesAt(root, path, 0)
	}
	if !ok {
		b = s.bound(root)
	}
	if key != nil {
		if n := int(path.id) + 1; n > len(s.byPath) {
			s.byPath = append(s.byPath, make([]pathEntry, n-len(s.byPath))...)
		}
		s.byPath[path.id] = pathEntry{root: key, bound: b}
		s.used = append(s.used, path.id)
	}
	return b
}

// stemValue returns the value at stem in root, remembered by stem and the
// root's identity key (nil: not remembered): paths that share their field
// steps, such as those into each container of a pod spec, follow them
// once per request.
func (s *Sizes) stemValue(stem *Path, root any, key unsafe.Pointer) (any, stepResult) {
	if s == nil || key == nil || stem.id < 0 {
		return valueAt(root, stem)
	}
	if int(stem.id) < len(s.stems) {
		if e := s.stems[stem.id]; e.root == key {
			return e.v, e.st
		}
	}
	v, st := valueAt(root, stem)
	if n := int(stem.id) + 1; n > len(s.stems) {
		s.stems = append(s.stems, make([]stemEntry, n-len(s.stems))...)
	}
	s.stems[stem.id] = stemEntry{root: key, v: v, st: st}
	s.used = append(s.used, stem.id)
	return v, st
}
