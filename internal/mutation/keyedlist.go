package mutation

import (
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// maxListKeys bounds the key fields mergeKeyedList compares; lists with
// more go to structured-merge-diff.
const maxListKeys = 4

// listKey is the values of an element's key fields, in the order of the
// list's keys: kind tells a string (in s) from an integer or a boolean (in
// n), so that values of different kinds never compare equal, as they do
// not in structured-merge-diff. It holds no interface, so that making one
// allocates nothing.
type listKey struct {
	kind [maxListKeys]uint8
	s    [maxListKeys]string
	n    [maxListKeys]int64
}

// The kinds of key values.
const (
	keyString uint8 = iota + 1
	keyInt
	keyBool
)

// mergeKeyedList merges rhs into lhs, two non-empty lists of an
// associative type with keys, in the one shape whose result it can state
// without walking structured-merge-diff's ordering rules: every element of
// both lists holds every key field as a string, integer or boolean, no key
// repeats within a list, the patch's elements that the object also holds
// come in the object's order, and its new elements all come after them.
// structured-merge-diff's merge then keeps the object's elements in their
// order, each merged with the patch's element of the same key, and appends
// the new ones in the patch's order. handled is false outside that shape
// (structured-merge-diff merges the lists then); ok is false when an
// element's merge failed.
func mergeKeyedList(c *copier, s *schema.Schema, t *schema.List, lhs, rhs value.List) (out []any, handled, ok bool) {
	if len(t.Keys) > maxListKeys {
		return nil, false, false
	}
	a := c.a
	lkeys, lidx, lok := listKeys(a, t, lhs)
	if !lok {
		return nil, false, false
	}
	rkeys, _, rok := listKeys(a, t, rhs)
	if !rok {
		return nil, false, false
	}
	// matched[i] is the index in rhs of lhs[i]'s key, or -1.
	matched := make([]int, len(lkeys))
	for i := range matched {
		matched[i] = -1
	}
	last, fresh := -1, false
	for j, k := range rkeys {
		i, shared := lidx[k]
		switch {
		case !shared:
			fresh = true
		case fresh || i < last:
			return nil, false, false
		default:
			matched[i], last = j, i
		}
	}
	out = make([]any, 0, len(lkeys)+len(rkeys))
	for i, j := range matched {
		l := lhs.AtUsing(a, i)
		v, ok := c.only(l), true
		if j >= 0 {
			r := rhs.AtUsing(a, j)
			v, ok = mergeValues(c, s, t.ElementType, l, r)
			a.Free(r)
		}
		a.Free(l)
		if !ok {
			return nil, true, false
		}
		out = append(out, v)
	}
	for j, k := range rkeys {
		if _, shared := lidx[k]; shared {
			continue
		}
		r := rhs.AtUsing(a, j)
		out = append(out, c.copy(r))
		a.Free(r)
	}
	return out, true, true
}

// listKeys reads the key of every element of l; ok is false when an
// element is not a map, lacks a key field, holds one that is not a string,
// integer or boolean, or repeats an earlier element's key. index maps each
// key to its element.
func listKeys(a value.Allocator, t *schema.List, l value.List) (keys []listKey, index map[listKey]int, ok bool) {
	n := l.Length()
	keys = make([]listKey, n)
	index = make(map[listKey]int, n)
	for i := range n {
		e := l.AtUsing(a, i)
		ok = elementKey(a, t, e, &keys[i])
		a.Free(e)
		if !ok {
			return nil, nil, false
		}
		if _, dup := index[keys[i]]; dup {
			return nil, nil, false
		}
		index[keys[i]] = i
	}
	return keys, index, true
}

// elementKey fills k with the key of the list element e.
func elementKey(a value.Allocator, t *schema.List, e value.Value, k *listKey) bool {
	if e.IsNull() || !e.IsMap() {
		return false
	}
	m := e.AsMapUsing(a)
	defer a.Free(m)
	for i, name := range t.Keys {
		v, found := m.GetUsing(a, name)
		if !found {
			return false
		}
		ok := true
		switch {
		case v.IsString():
			k.kind[i], k.s[i] = keyString, v.AsString()
		case v.IsInt():
			k.kind[i], k.n[i] = keyInt, v.AsInt()
		case v.IsBool():
			k.kind[i] = keyBool
			if v.AsBool() {
				k.n[i] = 1
			}
		default:
			ok = false
		}
		a.Free(v)
		if !ok {
			return false
		}
	}
	return true
}

// mergeLists hands two non-empty lists to mergeKeyedList; handled is
// false for anything else.
func mergeLists(c *copier, s *schema.Schema, t *schema.List, lhs, rhs value.Value) (out any, handled, ok bool) {
	if lhs.IsNull() || rhs.IsNull() || !lhs.IsList() || !rhs.IsList() {
		return nil, false, false
	}
	ll, rl := lhs.AsListUsing(c.a), rhs.AsListUsing(c.a)
	defer c.a.Free(ll)
	defer c.a.Free(rl)
	if ll.Length() == 0 || rl.Length() == 0 {
		return nil, false, false
	}
	l, handled, ok := mergeKeyedList(c, s, t, ll, rl)
	return l, handled, ok
}
