package celvalue

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Select returns the entry name of v, a value resolved from an
// activation or read before, when v is a lazy typed map (see [TypedValue])
// that has the entry and the entry converts without error: the value
// cel-go's field selection `v.name` gives. Otherwise it reports false and
// the caller selects as cel-go does, which yields the same value or the
// error cel-go reports. key is name as a CEL string (a Go map caches its
// entries by it).
func Select(v any, name string, key ref.Val) (ref.Val, bool) {
	m, ok := v.(*typedMap)
	if !ok {
		return nil, false
	}
	e, found := m.lookup(name, key)
	if !found {
		return nil, false
	}
	if _, bad := e.(*types.Err); bad {
		return nil, false
	}
	return e, true
}

// Has reports whether v, a lazy typed map, has the entry name, as cel-go's
// presence test `has(v.name)` does; ok is false when v is not a lazy typed
// map or the entry's conversion failed, whose errors cel-go reports.
func Has(v any, name string, key ref.Val) (present, ok bool) {
	m, isMap := v.(*typedMap)
	if !isMap {
		return false, false
	}
	e, found := m.lookup(name, key)
	if _, bad := e.(*types.Err); bad {
		return false, false
	}
	return found, true
}

// IsTyped reports whether v is a lazy typed map or list (see
// [TypedValue]).
func IsTyped(v any) bool {
	switch v.(type) {
	case *typedMap, *typedList:
		return true
	}
	return false
}
