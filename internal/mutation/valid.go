package mutation

import (
	"sigs.k8s.io/structured-merge-diff/v6/schema"
)

// validates reports whether structured-merge-diff's validation of v with
// the type tr certainly finds no error: with duplicates allowed
// (typed.AllowDuplicates, how the live object is typed) unless unique,
// the patch's case, where a key repeated in an associative list is an
// error. v is JSON-like data: nil,
// bool, string, int64, float64, map[string]any and []any; any other Go
// type, and any case the checks below do not settle, answers false, and
// the caller then runs structured-merge-diff's own validation for its
// verdict and its message. It allocates nothing, where the library's walk
// allocates for every map entry.
//
// The checks are the library's (typed/validate.go, typed/helpers.go): the
// type must resolve; a value is checked against the part of the atom that
// fits its kind (null fits any atom that has a part); scalars against the
// scalar type; every field of a map must be declared or the map must have
// an element type; an associative list with keys needs map elements that
// hold, or default, at least one key; one without keys needs non-null
// scalar elements; with unique, no two elements may have the same key
// (see distinct).
func validates(s *schema.Schema, tr schema.TypeRef, v any, unique bool) bool {
	a, ok := s.Resolve(tr)
	if !ok {
		return false
	}
	switch v := v.(type) {
	case nil:
		return a.Map != nil || a.Scalar != nil || a.List != nil
	case bool, string, int64, float64:
		return a.Scalar != nil && scalarFits(*a.Scalar, v)
	case map[string]any:
		return a.Map != nil && mapValidates(s, a.Map, v, unique)
	case []any:
		return a.List != nil && listValidates(s, a.List, v, unique)
	}
	return false
}

// scalarFits is validateScalar's check of a non-null scalar.
func scalarFits(t schema.Scalar, v any) bool {
	switch v.(type) {
	case int64, float64:
		return t == schema.Numeric || t == schema.Untyped
	case string:
		return t == schema.String || t == schema.Untyped
	case bool:
		return t == schema.Boolean || t == schema.Untyped
	}
	return false
}

// mapValidates checks every field of m with its declared type, or the
// map's element type for an undeclared one.
func mapValidates(s *schema.Schema, t *schema.Map, m map[string]any, unique bool) bool {
	for k, e := range m {
		tr := t.ElementType
		if f, ok := t.FindField(k); ok {
			tr = f.Type
		} else if (tr == schema.TypeRef{}) {
			return false
		}
		if !validates(s, tr, e, unique) {
			return false
		}
	}
	return true
}

// listValidates checks the elements of l, and their keys when l is
// associative.
func listValidates(s *schema.Schema, t *schema.List, l []any, unique bool) bool {
	for _, e := range l {
		if t.ElementRelationship == schema.Associative && !keyed(s, t, e) {
			return false
		}
		if !validates(s, t.ElementType, e, unique) {
			return false
		}
	}
	return !unique || t.ElementRelationship != schema.Associative || distinct(t, l)
}

// maxDistinct bounds the elements distinct compares pairwise; longer
// associative lists are left to the library.
const maxDistinct = 32

// distinct reports whether no two elements of an associative list have
// the same key, where that is plain: every key field (every element of a
// set) a string, integer or boolean, compared with ==; keys of other
// kinds, missing key fields and long lists answer false.
func distinct(t *schema.List, l []any) bool {
	if len(l) > maxDistinct {
		return false
	}
	for i, e := range l {
		if !plainKey(t, e) {
			return false
		}
		for _, f := range l[:i] {
			if sameKey(t, e, f) {
				return false
			}
		}
	}
	return true
}

// plainKey reports whether e's key is made of strings, integers and
// booleans only.
func plainKey(t *schema.List, e any) bool {
	if len(t.Keys) == 0 {
		return plainScalar(e)
	}
	m, _ := e.(map[string]any)
	for _, k := range t.Keys {
		if v, ok := m[k]; !ok || !plainScalar(v) {
			return false
		}
	}
	return true
}

func plainScalar(v any) bool {
	switch v.(type) {
	case string, int64, bool:
		return true
	}
	return false
}

// sameKey compares the keys of two elements plainKey accepted.
func sameKey(t *schema.List, e, f any) bool {
	if len(t.Keys) == 0 {
		return e == f
	}
	em, fm := e.(map[string]any), f.(map[string]any)
	for _, k := range t.Keys {
		if em[k] != fm[k] {
			return false
		}
	}
	return true
}

// keyed reports whether an element of an associative list yields a path
// element: a map holding or defaulting at least one key field for a list
// with keys, a non-null scalar for a set.
func keyed(s *schema.Schema, t *schema.List, e any) bool {
	if len(t.Keys) == 0 {
		switch e.(type) {
		case bool, string, int64, float64:
			return true
		}
		return false
	}
	m, ok := e.(map[string]any)
	if !ok {
		return false
	}
	found := false
	for _, k := range t.Keys {
		if _, ok := m[k]; ok {
			found = true
			continue
		}
		// A missing key needs its default looked up, which fails when the
		// element type is not a map.
		a, ok := s.Resolve(t.ElementType)
		if !ok || a.Map == nil {
			return false
		}
		if f, _ := a.Map.FindField(k); f.Default != nil {
			found = true
		}
	}
	return found
}
