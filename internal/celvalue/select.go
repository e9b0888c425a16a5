package celvalue

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

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
