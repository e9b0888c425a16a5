package celvalue

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// orderedAdapter converts JSON-like Go values to CEL values whose maps
// iterate in sorted key order. cel-go iterates Go maps in Go's random order,
// so comprehensions over object fields (all, exists, map, filter, two-var
// forms) could charge different costs, hit different errors first or build
// lists in different orders on two evaluations of the same input. The API
// server has that nondeterminism; sorted order is one of the orders it may
// use, so vapkit stays within upstream's behaviour while giving the same
// Decision every time.
type orderedAdapter struct {
	base types.Adapter
}

// OrderedAdapter wraps base so that the maps it makes iterate in sorted key
// order (see orderedAdapter), unless base is such an adapter already.
// Callers whose own adapter wraps one of these need not wrap it again.
func OrderedAdapter(base types.Adapter) types.Adapter {
	if _, ok := base.(orderedAdapter); ok {
		return base
	}
	return orderedAdapter{base: base}
}

// NativeToValue wraps map[string]any and []any so that nested maps are
// ordered too; everything else goes to the base adapter.
func (a orderedAdapter) NativeToValue(v any) ref.Val {
	switch v := v.(type) {
	case *typedMap, *typedList, types.String, types.Int, types.Bool, types.Double, types.Null:
		// Already CEL values, as the base adapter would return them;
		// cel-go adapts every field it selects, so these come first.
		return v.(ref.Val)
	case map[string]any:
		return &orderedMap{Mapper: types.NewStringInterfaceMap(a, v), m: v}
	case []any:
		return types.NewDynamicList(a, v)
	}
	return a.base.NativeToValue(v)
}

// orderedMap is a CEL map over a map[string]any whose iterator yields the
// keys in sorted order. Every other operation is cel-go's own.
type orderedMap struct {
	traits.Mapper
	m map[string]any
}

var (
	_ traits.Mapper = (*orderedMap)(nil)
	_ traits.Zeroer = (*orderedMap)(nil)
)

// Iterator yields the keys in sorted order.
func (o *orderedMap) Iterator() traits.Iterator {
	keys := make([]string, 0, len(o.m))
	for k := range o.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &sortedKeyIterator{keys: keys}
}

// IsZeroValue reports whether the map is empty, as cel-go's maps do.
func (o *orderedMap) IsZeroValue() bool { return len(o.m) == 0 }

// String renders the map as cel-go does.
func (o *orderedMap) String() string {
	if s, ok := o.Mapper.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprint(o.m)
}

// sortedKeyIterator iterates over precomputed keys.
type sortedKeyIterator struct {
	keys []string
	i    int
}

func (it *sortedKeyIterator) HasNext() ref.Val { return types.Bool(it.i < len(it.keys)) }

func (it *sortedKeyIterator) Next() ref.Val {
	if it.i >= len(it.keys) {
		return nil
	}
	k := it.keys[it.i]
	it.i++
	return types.String(k)
}

func (it *sortedKeyIterator) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}

func (it *sortedKeyIterator) ConvertToType(ref.Type) ref.Val {
	return types.NewErr("type conversion on iterators not supported")
}

func (it *sortedKeyIterator) Equal(ref.Val) ref.Val { return types.NewErr("no such overload") }

func (it *sortedKeyIterator) Type() ref.Type { return types.IteratorType }

func (it *sortedKeyIterator) Value() any { return nil }
