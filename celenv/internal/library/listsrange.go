package library

import (
	"reflect"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// maxEagerRange is the largest lists.range size built when the call runs:
// cel-go v0.29.2's limit on lists.range (ext/lists.go, defaultMaxRangeSize),
// which is also the API server's per-expression cost limit.
const maxEagerRange = 1_000_000

// UnlimitedRange redefines lists.range (overload lists_range, declared by
// cel-go's ext.Lists from its version 3) as the API servers of Kubernetes
// 1.34 to 1.36 run it: those are built with cel-go v0.26.0, whose range has
// no size limit and gives an empty list for a negative size, where cel-go
// v0.29.2 (1.37's and vapkit's) refuses a size over 1,000,000 ("lists.range:
// size n exceeds maximum allowed (1000000)") and a negative size
// ("lists.range: size must be non-negative, got n"). It must be added after
// ext.Lists, whose declaration it replaces.
//
// A list of more than 1,000,000 elements is not built when the call
// returns: its size alone decides what ext.Lists' runtime cost tracker
// charges (n+11, more than the API server's per-expression limit of
// 1,000,000), so a cost-limited evaluation is cancelled with "operation
// cancelled: actual cost limit exceeded" as on those servers, having
// charged the same cost. Only an evaluation without a cost limit reads the
// elements, and they are built then.
func UnlimitedRange() cel.EnvOption {
	return cel.Function("lists.range",
		cel.Overload("lists_range", []*cel.Type{cel.IntType}, cel.ListType(cel.IntType),
			cel.UnaryBinding(unlimitedRange)))
}

// unlimitedRange implements [UnlimitedRange].
func unlimitedRange(arg ref.Val) ref.Val {
	n, ok := arg.(types.Int)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	if n > maxEagerRange {
		return &lazyRange{n: n}
	}
	return buildRange(n)
}

// buildRange returns the list [0, 1, ..., n-1], empty when n <= 0.
func buildRange(n types.Int) traits.Lister {
	elems := make([]ref.Val, 0, max(n, 0))
	for i := range n {
		elems = append(elems, i)
	}
	return types.NewRefValList(types.DefaultTypeAdapter, elems).(traits.Lister)
}

// lazyRange is the list [0, 1, ..., n-1] whose elements are built on first
// use; its size is known without them.
type lazyRange struct {
	n    types.Int
	once sync.Once
	list traits.Lister
}

// elems returns the built list.
func (r *lazyRange) elems() traits.Lister {
	r.once.Do(func() { r.list = buildRange(r.n) })
	return r.list
}

// Size returns the number of elements without building them.
func (r *lazyRange) Size() ref.Val { return r.n }

// Type returns the list type.
func (r *lazyRange) Type() ref.Type { return types.ListType }

// Add concatenates r and other.
func (r *lazyRange) Add(other ref.Val) ref.Val { return r.elems().Add(other) }

// Contains reports whether elem is an element of r.
func (r *lazyRange) Contains(elem ref.Val) ref.Val { return r.elems().Contains(elem) }

// ConvertToNative converts the elements to a Go value of type t.
func (r *lazyRange) ConvertToNative(t reflect.Type) (any, error) {
	return r.elems().ConvertToNative(t)
}

// ConvertToType converts r to the CEL type t.
func (r *lazyRange) ConvertToType(t ref.Type) ref.Val { return r.elems().ConvertToType(t) }

// Equal compares r with other element by element.
func (r *lazyRange) Equal(other ref.Val) ref.Val { return r.elems().Equal(other) }

// Get returns the element at index.
func (r *lazyRange) Get(index ref.Val) ref.Val { return r.elems().Get(index) }

// Iterator iterates over the elements.
func (r *lazyRange) Iterator() traits.Iterator { return r.elems().Iterator() }

// Value returns the elements' Go value.
func (r *lazyRange) Value() any { return r.elems().Value() }

// IsZeroValue reports whether the list is empty, which it never is.
func (r *lazyRange) IsZeroValue() bool { return false }
