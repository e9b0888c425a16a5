package mutation

import (
	"sigs.k8s.io/structured-merge-diff/v6/schema"
)

// validates reports whether structured-merge-diff's validation of v with
// the type tr, duplicates allowed (typed.AllowDuplicates, how the live
// object is typed), certainly finds no error. v is JSON-like data: nil,
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
// scalar elements. Duplicates are not errors.
func validates(s *schema.Schema, tr schema.TypeRef, v any) bool {
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
		return a.Map != nil && mapValidates(s, a.Map, v)
	case []any:
		return a.List != nil && listValidates(s, a.List, v)
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
func mapValidates(s *schema.Schema, t *schema.Map, m map[string]any) bool {
	for k, e := range m {
		tr := t.ElementType
		if f, ok := t.FindField(k); ok {
			tr = f.Type
		} else if (tr == schema.TypeRef{}) {
			return false
		}
		if !validates(s, tr, e) {
			return false
		}
	}
	return true
}

// listValidates checks the elements of l, and their keys when l is
// associative.
func listValidates(s *schema.Schema, t *schema.List, l []any) bool {
	for _, e := range l {
		if t.ElementRelationship == schema.Associative && !keyed(s, t, e) {
			return false
		}
		if !validates(s, t.ElementType, e) {
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
