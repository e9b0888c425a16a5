package celvalue

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

var (
	_ traits.Lister = (*typedList)(nil)
	_ traits.Zeroer = (*typedList)(nil)
)

// typedList is a lazy CEL list over a Go slice.
type typedList struct {
	v     reflect.Value
	cache []ref.Val
	// small is the first of the converted elements of a list of at most
	// structBlock structs, converted together on the first read: one
	// allocation rather than a cache and a block (see at).
	small *typedMap
	// iter is the list's first iterator, handed out without allocating
	// (see Iterator); iter.l is nil until then.
	iter typedListIterator
}

// structBlock is how many struct elements of a list at converts with one
// allocation: iterations read every element, an index read only one, so
// blocks stay small.
const structBlock = 8

func (l *typedList) at(i int) ref.Val {
	if l.small != nil {
		return &unsafe.Slice(l.small, l.v.Len())[i]
	}
	if l.cache == nil {
		// The plan is looked up rather than kept, which would take
		// typedList to a larger size class.
		if p := infoOf(l.v.Type().Elem()); p.info != nil && !p.info.eager && l.v.Len() <= structBlock {
			small := make([]typedMap, l.v.Len())
			for j := range small {
				small[j] = typedMap{v: l.v.Index(j), info: p.info}
			}
			l.small = &small[0]
			return &small[i]
		}
		l.cache = make([]ref.Val, l.v.Len())
	}
	if v := l.cache[i]; v != nil {
		return v
	}
	p := infoOf(l.v.Type().Elem())
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

// Iterator yields the elements in order. The first iterator of the list
// lives in the list: most lists are iterated once or twice per request.
func (l *typedList) Iterator() traits.Iterator {
	if l.iter.l == nil {
		l.iter.l = l
		return &l.iter
	}
	return &typedListIterator{l: l}
}

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
