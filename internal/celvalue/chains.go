package celvalue

import (
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// SelectPath returns the value cel-go's field selections `v.a.b.c` give,
// for names a, b, c (at least one) and keys the same names as CEL strings
// (a Go map caches its entries by them), when v, a value resolved from an
// activation, is a lazy typed map (see [TypedValue]) whose entries along
// names are all present, lazy typed maps but the last, and convert without
// error. Otherwise it reports false and the caller selects as cel-go
// does, which yields the same value or the error cel-go reports. The
// values and caches are those the selections one by one leave, but the
// struct fields on the way that convert to lazy maps
// (`spec.template.spec` of `object.spec.template.spec.containers`) take
// them from one allocation.
func SelectPath(v any, names []string, keys []ref.Val) (ref.Val, bool) {
	var chain pathChain
	var out ref.Val
	for i, name := range names {
		m, ok := v.(*typedMap)
		if !ok {
			return nil, false
		}
		chain.rest = names[i+1:]
		e, found := m.lookupIn(name, keys[i], &chain)
		if !found {
			return nil, false
		}
		if _, bad := e.(*types.Err); bad {
			return nil, false
		}
		v, out = e, e
	}
	return out, out != nil
}

// pathChain is what SelectPath hands the lookups of one path: the names
// after the one being read, and the typedMaps allocated for the struct
// fields of the path not converted yet.
type pathChain struct {
	rest  []string
	spare []typedMap
}

// take returns a typedMap over f, a struct field of plan's type, when
// the conversion gives one, from spare: allocated, at the first field of
// a chain of at least two, for the chain (see chainLen). It returns nil
// for any other field, which converts as usual.
func (c *pathChain) take(f reflect.Value, plan *typeInfo) *typedMap {
	v, info := structTarget(f, plan)
	if info == nil {
		return nil
	}
	if len(c.spare) == 0 {
		n := 1 + chainLen(info, c.rest)
		if n < 2 {
			return nil
		}
		c.spare = make([]typedMap, n)
	}
	t := &c.spare[0]
	c.spare = c.spare[1:]
	*t = typedMap{v: v, info: info}
	return t
}

// structTarget returns the struct a value of plan's type converts to a
// lazy map over, as convert does (through non-nil pointers), and its
// layout; a nil layout when the value converts to anything else.
func structTarget(v reflect.Value, plan *typeInfo) (reflect.Value, *structInfo) {
	for range maxPointerHops {
		if plan.custom != nil {
			return reflect.Value{}, nil
		}
		switch plan.kind {
		case reflect.Pointer:
			if v.IsNil() {
				return reflect.Value{}, nil
			}
			v, plan = v.Elem(), plan.elemInfo()
		case reflect.Struct:
			if plan.info == nil || plan.info.eager {
				return reflect.Value{}, nil
			}
			return v, plan.info
		default:
			return reflect.Value{}, nil
		}
	}
	return reflect.Value{}, nil
}

// maxPointerHops bounds the pointers structTarget and chainLen follow:
// a type may point to itself.
const maxPointerHops = 8

// chainLen returns how many of names, read one after the other from a
// struct of layout info, are struct fields whose types convert to lazy
// maps (pointers followed), judging by the types alone: nil pointers and
// left-out fields end a chain early, leaving typedMaps unused.
func chainLen(info *structInfo, names []string) int {
	n := 0
	for _, name := range names {
		i := info.index(name)
		if i < 0 || len(info.fields[i]) != 1 {
			return n
		}
		path := info.fields[i][0]
		if info = structLayout(path[len(path)-1].plan); info == nil {
			return n
		}
		n++
	}
	return n
}

// structLayout is structTarget for a type: the layout of the struct its
// values convert to lazy maps over, or nil.
func structLayout(plan *typeInfo) *structInfo {
	for range maxPointerHops {
		switch {
		case plan.custom != nil:
			return nil
		case plan.kind == reflect.Pointer:
			plan = plan.elemInfo()
		case plan.kind == reflect.Struct && plan.info != nil && !plan.info.eager:
			return plan.info
		default:
			return nil
		}
	}
	return nil
}
