// Package listtype gives lists the semantics of their x-kubernetes-list-type
// schema extension: set and map lists compare equal regardless of order and
// concatenate without duplicates.
//
// # Where the semantics apply
//
// The API server applies them at evaluation time to values it converts
// with a schema: the x-kubernetes-validations rules of
// CustomResourceDefinitions. Nowhere in vapkit do they apply, which is why
// no vapkit package imports this one:
//
//   - Admission policies evaluate schemaless values, so the evaluator
//     compares and concatenates every list as a plain CEL list, as the API
//     server does for them.
//   - Type checking (package typecheck, like upstream's) declares every
//     list of a schema list(T) whatever its list type; the type is the same
//     for atomic, set and map lists, so the semantics have no say there
//     (typecheck's TestListTypeIgnoredByTypeChecking shows it).
//   - Merging the results of a MutatingAdmissionPolicy's apply
//     configurations uses structured-merge-diff's own list types, read from
//     the same schema extensions.
//
// The package serves programs that evaluate CEL over schema-typed values
// themselves, as CRD validation rules do.
//
// # Concurrency
//
// The functions and the values they return are safe for concurrent use.
//
// # Errors
//
// An invalid x-kubernetes-list-type is an error with the API server's text;
// comparisons of elements CEL cannot compare are CEL errors, as upstream.
//
// # Compatibility
//
// The semantics follow k8s.io/apiserver v0.37.2 pkg/cel/common
// (unstructuredSetList, unstructuredMapList).
package listtype

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The values of the x-kubernetes-list-type schema extension.
const (
	ListTypeAtomic = "atomic"
	ListTypeSet    = "set"
	ListTypeMap    = "map"
)

// Names of the schema extensions that give a list its semantics.
const (
	listTypeExtension    = "x-kubernetes-list-type"
	listMapKeysExtension = "x-kubernetes-list-map-keys"
)

// errNotArraySchema is returned for list operations on a schema that does
// not describe an array.
var errNotArraySchema = errors.New("schema is not of type array")

// ListType returns the list type (x-kubernetes-list-type) of the array
// schema s: [ListTypeAtomic] when the extension is absent, [ListTypeSet] or
// [ListTypeMap]. Any other value is an error with the API server's text.
func ListType(s *spec.Schema) (string, error) {
	if s == nil || !s.Type.Contains("array") {
		return "", errNotArraySchema
	}
	v, ok := s.Extensions[listTypeExtension]
	if !ok {
		return ListTypeAtomic, nil
	}
	lt, _ := v.(string)
	switch lt {
	case "":
		return ListTypeAtomic, nil
	case ListTypeAtomic, ListTypeSet, ListTypeMap:
		return lt, nil
	}
	return "", fmt.Errorf("invalid x-kubernetes-list-type, expected 'map', 'set' or 'atomic' but got %v", v)
}

// ListMapKeys returns the map keys (x-kubernetes-list-map-keys) of the array
// schema s, in order, or nil when it declares none.
func ListMapKeys(s *spec.Schema) []string {
	if s == nil {
		return nil
	}
	switch keys := s.Extensions[listMapKeysExtension].(type) {
	case []string:
		return append([]string(nil), keys...)
	case []any:
		out := make([]string, 0, len(keys))
		for _, k := range keys {
			if str, ok := k.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// ListValue returns elements as a CEL list whose equality and concatenation
// follow the list type of the array schema s, as CRD validation rules see
// lists:
//
//   - atomic: an ordinary list; equality is ordered, `+` appends.
//   - set: equality ignores order (same size and same elements; elements
//     must be scalars, otherwise the error "listSet operations are only
//     supported on lists of scalar values"); `X + Y` is X followed by the
//     elements of Y that X lacks, in Y's order.
//   - map: elements are identified by their map-key fields; equality ignores
//     order and compares elements with equal keys; `X + Y` keeps X's order,
//     replaces X's elements by Y's elements with the same key and appends
//     Y's elements with new keys.
//
// These semantics apply when the returned value is the left operand, and the
// result of `+` keeps them. Elements are converted with cel-go's default type
// adapter, so a list nested inside an element is an ordinary list. Admission
// policies never see these semantics: the API server evaluates them without
// schemas.
func ListValue(s *spec.Schema, elements []any) (ref.Val, error) {
	lt, err := ListType(s)
	if err != nil {
		return nil, err
	}
	list := types.DefaultTypeAdapter.NativeToValue(elements).(traits.Lister)
	switch lt {
	case ListTypeSet:
		return &setList{Lister: list}, nil
	case ListTypeMap:
		return &mapList{Lister: list, keys: ListMapKeys(s)}, nil
	}
	return list, nil
}

// EqualLists reports whether a and b are equal under the list type of s (see
// [ListValue]).
func EqualLists(s *spec.Schema, a, b []any) (bool, error) {
	x, err := ListValue(s, a)
	if err != nil {
		return false, err
	}
	eq := x.Equal(types.DefaultTypeAdapter.NativeToValue(b))
	if err := valErr(eq); err != nil {
		return false, err
	}
	return eq == types.True, nil
}

// ConcatLists returns a + b under the list type of s (see [ListValue]).
func ConcatLists(s *spec.Schema, a, b []any) ([]any, error) {
	x, err := ListValue(s, a)
	if err != nil {
		return nil, err
	}
	sum := x.(traits.Adder).Add(types.DefaultTypeAdapter.NativeToValue(b))
	if err := valErr(sum); err != nil {
		return nil, err
	}
	l := sum.(traits.Lister)
	n, _ := l.Size().(types.Int)
	out := make([]any, 0, int(n))
	for it := l.Iterator(); it.HasNext() == types.True; {
		out = append(out, it.Next().Value())
	}
	return out, nil
}

// valErr returns the error a CEL error value carries, or nil.
func valErr(v ref.Val) error {
	if e, ok := v.(*types.Err); ok {
		return e
	}
	return nil
}

// listElements returns the elements of l.
func listElements(l traits.Lister) []ref.Val {
	n, _ := l.Size().(types.Int)
	out := make([]ref.Val, 0, int(n))
	for it := l.Iterator(); it.HasNext() == types.True; {
		out = append(out, it.Next())
	}
	return out
}

// goKey turns a raw value into something usable as a Go map key. Values of
// types that cannot be map keys are formatted with %#v, which includes their
// type and quotes strings.
func goKey(raw any) any {
	if raw != nil && !reflect.TypeOf(raw).Comparable() {
		return fmt.Sprintf("%#v", raw)
	}
	return raw
}

// setList is a list with x-kubernetes-list-type=set semantics.
type setList struct {
	traits.Lister
}

// setKey returns the identity of a set element.
func setKey(v ref.Val) (any, ref.Val) {
	switch v.(type) {
	case traits.Lister, traits.Mapper:
		return nil, types.NewErr("listSet operations are only supported on lists of scalar values")
	}
	return goKey(v.Value()), nil
}

func (l *setList) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if l.Size() != o.Size() {
		return types.False
	}
	set := map[any]bool{}
	for _, e := range listElements(l.Lister) {
		k, err := setKey(e)
		if err != nil {
			return err
		}
		set[k] = true
	}
	seen := map[any]bool{}
	for it := o.Iterator(); it.HasNext() == types.True; {
		k, err := setKey(it.Next())
		if err != nil {
			return err
		}
		if !set[k] {
			return types.False
		}
		seen[k] = true
	}
	return types.Bool(len(seen) == len(set))
}

func (l *setList) Add(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	elems := listElements(l.Lister)
	set := make(map[any]bool, len(elems))
	for _, e := range elems {
		k, err := setKey(e)
		if err != nil {
			return err
		}
		set[k] = true
	}
	for it := o.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		k, err := setKey(v)
		if err != nil {
			return err
		}
		if !set[k] {
			set[k] = true
			elems = append(elems, v)
		}
	}
	return &setList{Lister: types.NewRefValList(types.DefaultTypeAdapter, elems)}
}

// mapList is a list with x-kubernetes-list-type=map semantics.
type mapList struct {
	traits.Lister
	keys []string
}

// key returns the identity of a map-list element: the value of its single
// key field, or a formatted tuple of its key fields' values. A missing key
// field, or an element that is not an object, contributes null.
func (l *mapList) key(v ref.Val) any {
	field := func(name string) any {
		m, ok := v.(traits.Mapper)
		if !ok {
			return nil
		}
		f, found := m.Find(types.String(name))
		if !found || f == nil || types.IsUnknownOrError(f) {
			return nil
		}
		return goKey(f.Value())
	}
	if len(l.keys) == 1 {
		return field(l.keys[0])
	}
	tuple := make([]any, len(l.keys))
	for i, k := range l.keys {
		tuple[i] = field(k)
	}
	return fmt.Sprintf("%#v", tuple)
}

func (l *mapList) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if l.Size() != o.Size() {
		return types.False
	}
	byKey := map[any]ref.Val{}
	for _, e := range listElements(l.Lister) {
		byKey[l.key(e)] = e
	}
	seen := map[any]bool{}
	for it := o.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		k := l.key(v)
		mine, ok := byKey[k]
		if !ok {
			return types.False
		}
		if eq := mine.Equal(v); eq != types.True {
			return eq
		}
		seen[k] = true
	}
	return types.Bool(len(seen) == len(byKey))
}

func (l *mapList) Add(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	elems := listElements(l.Lister)
	pos := make(map[any]int, len(elems))
	for i, e := range elems {
		pos[l.key(e)] = i
	}
	for it := o.Iterator(); it.HasNext() == types.True; {
		v := it.Next()
		if i, ok := pos[l.key(v)]; ok {
			elems[i] = v
		} else {
			elems = append(elems, v)
		}
	}
	return &mapList{Lister: types.NewRefValList(types.DefaultTypeAdapter, elems), keys: l.keys}
}
