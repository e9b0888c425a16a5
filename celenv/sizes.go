package celenv

import (
	"reflect"
	"sync"
	"unsafe"
)

// Sizes remembers the size bounds that untracked batches (see
// [Batch.Untracked]) work out for the inputs of one request, so that the
// batches of its policies size each value once: the value at
// object.spec.template.spec.containers is the same for every policy that
// reads it. The zero value is ready to use. A Sizes belongs to one
// goroutine; call Reset before reusing it for another request, whose values
// may sit at the same addresses.
type Sizes struct {
	gen uint32
	// byPrefix is indexed by the prefixes' IDs; an entry holds for the
	// root value at root while its gen is the current one.
	byPrefix []prefixEntry
	// values are whole input values sized, by identity.
	values []valueEntry
}

type prefixEntry struct {
	gen   uint32
	root  unsafe.Pointer
	bound uint64
}

type valueEntry struct {
	key   unsafe.Pointer
	bound uint64
}

// Reset forgets every size, keeping the memory for the next request.
func (s *Sizes) Reset() {
	s.gen++
	if s.gen == 0 {
		// After 2^32 resets old entries could look current again.
		clear(s.byPrefix)
		s.gen = 1
	}
	clear(s.values)
	s.values = s.values[:0]
}

// identity returns what identifies v for the memo: the address of its map
// or pointer, or nil for values that have none (strings, lists, scalars),
// which are sized every time.
func identity(v any) unsafe.Pointer {
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Map, reflect.Pointer:
		return rv.UnsafePointer()
	}
	return nil
}

// bound returns SizeBound(v), remembered by v's identity.
func (s *Sizes) bound(v any) uint64 {
	if f, ok := v.(Lazy); ok {
		v = f()
	}
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

// prefixBound returns the bound of the value at pre in the input root, or
// of the whole root when the value cannot be found by field names,
// remembered by pre and the root's identity.
func (s *Sizes) prefixBound(pre *sizePrefix, root any) uint64 {
	if f, ok := root.(Lazy); ok {
		root = f()
	}
	var key unsafe.Pointer
	if s != nil {
		if s.gen == 0 {
			s.gen = 1 // the zero Sizes, never Reset
		}
		if key = identity(root); pre.id < 0 {
			key = nil
		} else if key != nil && int(pre.id) < len(s.byPrefix) {
			if e := s.byPrefix[pre.id]; e.gen == s.gen && e.root == key {
				return e.bound
			}
		}
	}
	var b uint64
	if at, ok := fieldsOf(root, pre); ok {
		b = s.bound(at)
	} else {
		b = s.bound(root)
	}
	if key != nil {
		if n := int(pre.id) + 1; n > len(s.byPrefix) {
			s.byPrefix = append(s.byPrefix, make([]prefixEntry, n-len(s.byPrefix))...)
		}
		s.byPrefix[pre.id] = prefixEntry{gen: s.gen, root: key, bound: b}
	}
	return b
}

// maxPrefixIDs bounds the prefixes an Env numbers, and so the memory of a
// Sizes; programs compiled after that size their prefixes without memo.
const maxPrefixIDs = 4096

// prefixTable numbers the prefixes of an Env's programs, so that equal
// chains in every program share one ID (and one entry of Sizes.byPrefix).
type prefixTable struct {
	mu  sync.Mutex
	ids map[string]*sizePrefix
}

// intern returns the shared prefix equal to p, whose key is key.
func (t *prefixTable) intern(key string, p sizePrefix) *sizePrefix {
	t.mu.Lock()
	defer t.mu.Unlock()
	if q, ok := t.ids[key]; ok {
		return q
	}
	if len(t.ids) >= maxPrefixIDs {
		p.id = -1
		return &p
	}
	if t.ids == nil {
		t.ids = map[string]*sizePrefix{}
	}
	p.id = int32(len(t.ids))
	t.ids[key] = &p
	return &p
}
