package typecheck

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// listErrors returns the API server's errors for duplicate items of the
// x-kubernetes-list-type set and map lists under obj (apiextensions-
// apiserver's structural list-type validation): a repeated set item, or a
// map-list item whose keys repeat an earlier item's, is a Duplicate at its
// index; a map-list item that is not an object is Invalid.
func listErrors(path *field.Path, s *spec.Schema, obj map[string]any) field.ErrorList {
	if s == nil || obj == nil {
		return nil
	}
	var errs field.ErrorList
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		for k, v := range obj {
			errs = append(errs, listErrorsOf(path.Key(k), ap.Schema, v)...)
		}
	}
	for k, v := range obj {
		if p, ok := s.Properties[k]; ok {
			errs = append(errs, listErrorsOf(path.Child(k), &p, v)...)
		}
	}
	return errs
}

// listErrorsOf checks one value of schema s.
func listErrorsOf(path *field.Path, s *spec.Schema, x any) field.ErrorList {
	switch v := x.(type) {
	case map[string]any:
		return listErrors(path, s, v)
	case []any:
		var errs field.ErrorList
		switch listType(s) {
		case "set":
			for _, i := range repeated(v) {
				errs = append(errs, field.Duplicate(path.Index(i), v[i]))
			}
		case "map":
			errs = append(errs, mapListErrors(path, s, v)...)
		}
		if s.Items != nil && s.Items.Schema != nil {
			for i := range v {
				errs = append(errs, listErrorsOf(path.Index(i), s.Items.Schema, v[i])...)
			}
		}
		return errs
	}
	return nil
}

// repeated returns the indexes of the second occurrence of each value that
// occurs more than once in l (objects and lists compared as JSON).
func repeated(l []any) []int {
	if len(l) <= 1 {
		return nil
	}
	counts := map[any]int{}
	var out []int
	for i, x := range l {
		k := x
		switch x.(type) {
		case map[string]any, []any:
			b, _ := json.Marshal(x)
			k = jsonText(b)
		}
		counts[k]++
		if counts[k] == 2 {
			out = append(out, i)
		}
	}
	return out
}

// jsonText keys compound values apart from string scalars.
type jsonText string

// noKey stands for the key of a map-list item that lacks it.
type noKey struct{}

// mapListErrors checks the items of a map list.
func mapListErrors(path *field.Path, s *spec.Schema, l []any) field.ErrorList {
	for i, x := range l {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return field.ErrorList{field.Invalid(path.Index(i), x, "must be an object for an array of list-type map")}
		}
	}
	if len(l) <= 1 {
		return nil
	}
	names := mapKeys(s)
	keys := make([]any, len(l))
	for i, x := range l {
		m, _ := x.(map[string]any)
		if len(names) == 1 {
			keys[i] = noKey{}
			if k, ok := m[names[0]]; ok {
				keys[i] = k
			}
			continue
		}
		key := map[string]any{}
		for _, n := range names {
			if k, ok := m[n]; ok {
				key[n] = k
			}
		}
		keys[i] = key
	}
	var errs field.ErrorList
	for _, i := range repeated(keys) {
		switch {
		case len(names) != 1:
			errs = append(errs, field.Duplicate(path.Index(i), keys[i]))
		case keys[i] == noKey{}:
			errs = append(errs, field.Duplicate(path.Index(i), map[string]any{}))
		default:
			errs = append(errs, field.Duplicate(path.Index(i), map[string]any{names[0]: keys[i]}))
		}
	}
	return errs
}
