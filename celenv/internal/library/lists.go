package library

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Lists returns the Kubernetes list library, apiserver's "kubernetes.lists",
// at the given version. Version 0 (Kubernetes 1.0 to 1.36) declares:
//
//	<list(T)>.isSorted() bool      // T comparable: int, uint, double, bool, duration, timestamp, string, bytes
//	<list(T)>.sum() T              // T summable: int, uint, double, duration; an empty list sums to T's zero
//	<list(T)>.min() T              // T comparable; error "min called on empty list"
//	<list(T)>.max() T              // T comparable; error "max called on empty list"
//	<list(A)>.indexOf(A) int       // first index, -1 when absent
//	<list(A)>.lastIndexOf(A) int   // last index, -1 when absent
//
// Version 1 and later (Kubernetes 1.37) add:
//
//	<dyn>.includes(dyn) bool       // list membership by ==; for a non-list receiver, receiver == arg
//
// The per-type overloads are declared in the order listed, as in apiserver
// `library/lists.go`; that order decides which one runs when the list's
// element type is only known at run time (the first element decides, and an
// empty dyn list counts as list(int), so `dyn([]).sum()` is 0).
//
// The library is a cel.SingletonLibrary: only the first Lists option added to
// an environment takes effect, whatever the version of later ones.
func Lists(version uint32) cel.EnvOption {
	return cel.Lib(listsLib{version: version})
}

// listsLib is the cel.SingletonLibrary behind [Lists].
type listsLib struct {
	version uint32
}

// LibraryName returns apiserver's name for the library.
func (listsLib) LibraryName() string { return "kubernetes.lists" }

// listElemType names one element type for which a templated overload is
// declared; name is used in the overload id.
type listElemType struct {
	name string
	typ  *cel.Type
	zero ref.Val // additive identity, for summable types only
}

// comparableElems and summableElems list the element types in apiserver's
// declaration order, which is significant (see [Lists]).
var (
	comparableElems = []listElemType{
		{name: "int", typ: cel.IntType},
		{name: "uint", typ: cel.UintType},
		{name: "double", typ: cel.DoubleType},
		{name: "bool", typ: cel.BoolType},
		{name: "duration", typ: cel.DurationType},
		{name: "timestamp", typ: cel.TimestampType},
		{name: "string", typ: cel.StringType},
		{name: "bytes", typ: cel.BytesType},
	}
	summableElems = []listElemType{
		{name: "int", typ: cel.IntType, zero: types.Int(0)},
		{name: "uint", typ: cel.UintType, zero: types.Uint(0)},
		{name: "double", typ: cel.DoubleType, zero: types.Double(0)},
		{name: "duration", typ: cel.DurationType, zero: types.Duration{}},
	}
)

// CompileOptions declares the functions of the configured version.
func (l listsLib) CompileOptions() []cel.EnvOption {
	// perElem declares one member overload list(T) -> result(T) per element type.
	perElem := func(fn string, elems []listElemType, id func(string) string,
		result func(*cel.Type) *cel.Type, impl func(listElemType) func(ref.Val) ref.Val) cel.EnvOption {
		overloads := make([]cel.FunctionOpt, 0, len(elems))
		for _, e := range elems {
			overloads = append(overloads, cel.MemberOverload(id(e.name),
				[]*cel.Type{cel.ListType(e.typ)}, result(e.typ), cel.UnaryBinding(impl(e))))
		}
		return cel.Function(fn, overloads...)
	}
	same := func(t *cel.Type) *cel.Type { return t }
	boolean := func(*cel.Type) *cel.Type { return cel.BoolType }
	a := cel.TypeParamType("A")

	opts := []cel.EnvOption{
		perElem("isSorted", comparableElems,
			func(n string) string { return fmt.Sprintf("list_%s_is_sorted_bool", n) },
			boolean, func(listElemType) func(ref.Val) ref.Val { return listIsSorted }),
		perElem("sum", summableElems,
			func(n string) string { return fmt.Sprintf("list_%s_sum_%s", n, n) },
			same, func(e listElemType) func(ref.Val) ref.Val { return listSum(e.zero) }),
		perElem("max", comparableElems,
			func(n string) string { return fmt.Sprintf("list_%s_max_%s", n, n) },
			same, func(listElemType) func(ref.Val) ref.Val { return listExtreme("max", types.IntNegOne) }),
		perElem("min", comparableElems,
			func(n string) string { return fmt.Sprintf("list_%s_min_%s", n, n) },
			same, func(listElemType) func(ref.Val) ref.Val { return listExtreme("min", types.IntOne) }),
		cel.Function("indexOf",
			cel.MemberOverload("list_a_index_of_int", []*cel.Type{cel.ListType(a), a}, cel.IntType,
				cel.BinaryBinding(listIndexOf))),
		cel.Function("lastIndexOf",
			cel.MemberOverload("list_a_last_index_of_int", []*cel.Type{cel.ListType(a), a}, cel.IntType,
				cel.BinaryBinding(listLastIndexOf))),
	}
	if l.version >= 1 {
		opts = append(opts, cel.Function("includes",
			cel.MemberOverload("list_includes_dyn_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.BoolType,
				cel.BinaryBinding(listIncludes))))
	}
	return opts
}

// ProgramOptions returns nothing; all bindings are declared with the functions.
func (listsLib) ProgramOptions() []cel.ProgramOption { return nil }

// listIsSorted reports whether no element compares greater than its
// successor. As in apiserver, a comparison that yields an error (mixed types
// in a dyn list) does not count as out of order.
func listIsSorted(list ref.Val) ref.Val {
	iterable, ok := list.(traits.Iterable)
	if !ok {
		return types.MaybeNoSuchOverloadErr(list)
	}
	var prev traits.Comparer
	for it := iterable.Iterator(); it.HasNext() == types.True; {
		next := it.Next()
		cmp, ok := next.(traits.Comparer)
		if !ok {
			return types.MaybeNoSuchOverloadErr(next)
		}
		if prev != nil && prev.Compare(next) == types.IntOne {
			return types.False
		}
		prev = cmp
	}
	return types.True
}

// listSum adds the elements to zero, left to right. An addition error (such
// as int overflow or a type mismatch in a dyn list) is the result.
func listSum(zero ref.Val) func(ref.Val) ref.Val {
	return func(list ref.Val) ref.Val {
		iterable, ok := list.(traits.Iterable)
		if !ok {
			return types.MaybeNoSuchOverloadErr(list)
		}
		acc := zero
		for it := iterable.Iterator(); it.HasNext() == types.True; {
			next := it.Next()
			if _, ok := next.(traits.Adder); !ok {
				return types.MaybeNoSuchOverloadErr(next)
			}
			adder, ok := acc.(traits.Adder)
			if !ok {
				return types.MaybeNoSuchOverloadErr(acc)
			}
			acc = adder.Add(next)
			if _, ok := acc.(traits.Adder); !ok {
				return types.MaybeNoSuchOverloadErr(acc)
			}
		}
		return acc
	}
}

// listExtreme returns the binding of min (prefer = 1: replace the candidate
// when it compares greater) or max (prefer = -1). On ties the earliest
// element wins. An empty list is the error "<name> called on empty list".
func listExtreme(name string, prefer types.Int) func(ref.Val) ref.Val {
	return func(list ref.Val) ref.Val {
		iterable, ok := list.(traits.Iterable)
		if !ok {
			return types.MaybeNoSuchOverloadErr(list)
		}
		var best traits.Comparer
		var bestVal ref.Val
		for it := iterable.Iterator(); it.HasNext() == types.True; {
			next := it.Next()
			cmp, ok := next.(traits.Comparer)
			if !ok {
				return types.MaybeNoSuchOverloadErr(next)
			}
			if best == nil || best.Compare(next) == prefer {
				best, bestVal = cmp, next
			}
		}
		if best == nil {
			return types.NewErr("%s called on empty list", name)
		}
		return bestVal
	}
}

// listIndexOf returns the index of the first element equal to item, or -1.
func listIndexOf(list, item ref.Val) ref.Val {
	lister, size, errVal := listerAndSize(list)
	if errVal != nil {
		return errVal
	}
	for i := types.Int(0); i < size; i++ {
		if lister.Get(i).Equal(item) == types.True {
			return i
		}
	}
	return types.Int(-1)
}

// listLastIndexOf returns the index of the last element equal to item, or -1.
func listLastIndexOf(list, item ref.Val) ref.Val {
	lister, size, errVal := listerAndSize(list)
	if errVal != nil {
		return errVal
	}
	for i := size - 1; i >= 0; i-- {
		if lister.Get(i).Equal(item) == types.True {
			return i
		}
	}
	return types.Int(-1)
}

// listerAndSize returns list as a traits.Lister with its size, or an error
// value when it is not a list with an int size.
func listerAndSize(list ref.Val) (traits.Lister, types.Int, ref.Val) {
	lister, ok := list.(traits.Lister)
	if !ok {
		return nil, 0, types.MaybeNoSuchOverloadErr(list)
	}
	size, ok := lister.Size().(types.Int)
	if !ok {
		return nil, 0, types.MaybeNoSuchOverloadErr(lister.Size())
	}
	return lister, size, nil
}

// listIncludes reports whether target, when it is a list, has an element
// equal to arg, and otherwise whether target equals arg. Equality errors
// (such as comparing a net.IP with a string) count as not equal.
func listIncludes(target, arg ref.Val) ref.Val {
	if list, ok := target.(traits.Lister); ok {
		for it := list.Iterator(); it.HasNext() == types.True; {
			if it.Next().Equal(arg) == types.True {
				return types.True
			}
		}
		return types.False
	}
	return types.Bool(target.Equal(arg) == types.True)
}
