package mutation

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/vapkit/vapkit/internal/patchtypes"
)

// Apply merges the value of an ApplyConfiguration expression into obj with
// server-side-apply semantics and returns the merged object, unstructured,
// as upstream's applyConfigPatcher does: the type-name check ("type
// mismatch: …"), apiVersion and kind taken from obj whatever the expression
// set, then structured-merge-diff with tc ("error applying patch: …"). No
// field ownership is recorded or consulted. obj is not modified.
func Apply(tc *TypeConverter, obj runtime.Object, v *patchtypes.ObjectVal) (*unstructured.Unstructured, error) {
	return ApplyReusing(tc, obj, nil, v)
}

// ApplyReusing is [Apply] for callers that apply one configuration after
// another: prior is the result of the previous one (or any data, nil
// included). The result is Apply's; where obj is a typed object, the
// data it is read into reuses the maps and lists of prior that are equal
// to its own, so the result shares them with prior. Neither may be
// modified afterwards.
func ApplyReusing(tc *TypeConverter, obj runtime.Object, prior map[string]any, v *patchtypes.ObjectVal) (*unstructured.Unstructured, error) {
	if err := v.CheckTypeNames(); err != nil {
		return nil, fmt.Errorf("type mismatch: %w", err)
	}
	// Upstream reads Value(), so a conversion failure is not an error here:
	// it is embedded in the map (nested) or makes the result a non-map.
	m, ok := v.Value().(map[string]any)
	if !ok {
		// Upstream formats its own value type with %T.
		return nil, errors.New("invalid return type: *dynamic.ObjectVal")
	}
	patch := &unstructured.Unstructured{Object: m}
	patch.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	out, err := merge(tc, obj, prior, patch)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: %w", err)
	}
	return out, nil
}

// merge is upstream's ApplyStructuredMergeDiff.
func merge(tc *TypeConverter, obj runtime.Object, prior map[string]any, patch *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if tc == nil {
		return nil, errors.New("type converter must not be nil")
	}
	p, err := tc.patchValue(patch)
	if err != nil {
		return nil, fmt.Errorf("failed to convert patch object to typed object: %w", err)
	}
	sc := scratches.Get().(*scratch)
	defer sc.release()
	// hasAtomics first: findAtomics builds every path it visits.
	if sc.atoms.hasAtomics(p.Schema(), p.TypeRef(), p.AsValue()) {
		if atomics := findAtomics(nil, p.Schema(), p.TypeRef(), p.AsValue()); len(atomics) > 0 {
			return nil, fmt.Errorf("invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: %v", strings.Join(atomics, ", "))
		}
	}
	live, owned, err := tc.liveValue(sc, obj, prior)
	if err != nil {
		return nil, fmt.Errorf("failed to convert original object to typed object: %w", err)
	}
	if u, ok := mergeTouched(sc.copier, live, p, owned); ok {
		return &unstructured.Unstructured{Object: u}, nil
	}
	if owned {
		// The library's merge of the object as it types it, so that its
		// error reads as upstream's.
		if live, err = tc.ObjectToTyped(obj, typed.AllowDuplicates); err != nil {
			return nil, fmt.Errorf("failed to convert original object to typed object: %w", err)
		}
	}
	merged, err := live.Merge(p)
	if err != nil {
		return nil, fmt.Errorf("failed to merge patch: %w", err)
	}
	u, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("failed to convert typed object to object: failed to convert value to unstructured for type %T", merged.AsValue().Unstructured())
	}
	return &unstructured.Unstructured{Object: u}, nil
}

// mergeTouched merges the patch p into the live object as live.Merge(p)
// does, walking only the fields both hold: structured-merge-diff's merge
// of a field that only one side holds is a copy of that side's value (the
// object was validated before, so no error can come from it), and every
// field of a granular map (not atomic, not deduced) that both hold merges
// alone, with the map's schema for that field. Where both sides hold
// anything else (lists, atomic maps), structured-merge-diff merges the
// two values itself; a scalar is the patch's. ok is false when the merge failed or the
// result is not an object: Merge then runs on the whole object, so that
// its error names the field as upstream's does.
//
// When owned, live's value is unstructured data made for this merge
// alone: the fields only live holds are taken as they are, not copied.
func mergeTouched(c *copier, live, p *typed.TypedValue, owned bool) (out map[string]any, ok bool) {
	c.share = owned
	u, ok := mergeValues(c, live.Schema(), live.TypeRef(), live.AsValue(), p.AsValue())
	if !ok {
		return nil, false
	}
	out, ok = u.(map[string]any)
	return out, ok
}

// mergeValues merges rhs into lhs, both present, with the type tr.
func mergeValues(c *copier, s *schema.Schema, tr schema.TypeRef, lhs, rhs value.Value) (any, bool) {
	a := c.a
	at, ok := s.Resolve(tr)
	if !ok {
		return nil, false
	}
	if at.Scalar != nil && at.Map == nil && at.List == nil {
		// A scalar is a leaf: the patch's value, valid since the patch
		// was validated, is kept.
		return rhs.Unstructured(), true
	}
	if l := at.List; l != nil && at.Map == nil && at.Scalar == nil && l.ElementRelationship == schema.Associative && len(l.Keys) > 0 {
		if out, handled, ok := mergeLists(c, s, l, lhs, rhs); handled {
			return out, ok
		}
	}
	if at.Map == nil || at.List != nil || at.Scalar != nil || at.Map.ElementRelationship == schema.Atomic ||
		lhs.IsNull() || rhs.IsNull() || !lhs.IsMap() || !rhs.IsMap() {
		return mergeSMD(s, tr, lhs, rhs)
	}
	lm, rm := lhs.AsMapUsing(a), rhs.AsMapUsing(a)
	defer a.Free(lm)
	defer a.Free(rm)
	if lm.Empty() && rm.Empty() {
		// An empty map on both sides is a leaf: the patch's is kept.
		return mergeSMD(s, tr, lhs, rhs)
	}
	if c.share {
		if out, plain := mergePlain(c, s, at.Map, lhs, rhs, lm, rm); plain {
			return out, out != nil
		}
	}
	out := make(map[string]any, lm.Length()+rm.Length())
	ok = value.MapZipUsing(a, lm, rm, value.Unordered, func(key string, l, r value.Value) bool {
		var v any
		switch {
		case r == nil:
			v = c.only(l)
		case l == nil:
			v = c.copy(r)
		default:
			ft := at.Map.ElementType
			if f, ok := at.Map.FindField(key); ok {
				ft = f.Type
			}
			var ok bool
			if v, ok = mergeValues(c, s, ft, l, r); !ok {
				return false
			}
		}
		out[key] = v
		return true
	})
	return out, ok
}

// mergePlain is mergeValues' field-by-field merge of two maps held as
// map[string]any, which it ranges over directly instead of zipping them
// through closures: the fields only lhs holds are taken as they are (lhs
// belongs to the merge), those only rhs holds are copied, the others
// merge with the field's type. plain is false when either side is held
// otherwise; out is nil when a field's merge failed.
func mergePlain(c *copier, s *schema.Schema, t *schema.Map, lhs, rhs value.Value, lm, rm value.Map) (out map[string]any, plain bool) {
	lu, lok := lhs.Unstructured().(map[string]any)
	ru, rok := rhs.Unstructured().(map[string]any)
	if !lok || !rok {
		return nil, false
	}
	a := c.a
	out = make(map[string]any, len(lu)+len(ru))
	for k, v := range lu {
		if _, both := ru[k]; !both {
			out[k] = v
		}
	}
	for k := range ru {
		r, _ := rm.GetUsing(a, k)
		var v any
		ok := true
		if l, both := lm.GetUsing(a, k); both {
			ft := t.ElementType
			if f, found := t.FindField(k); found {
				ft = f.Type
			}
			v, ok = mergeValues(c, s, ft, l, r)
			a.Free(l)
		} else {
			v = c.copy(r)
		}
		a.Free(r)
		if !ok {
			return nil, true
		}
		out[k] = v
	}
	return out, true
}

// mergeSMD merges rhs into lhs with structured-merge-diff, as the walk of
// a whole object merges the field they are the values of.
func mergeSMD(s *schema.Schema, tr schema.TypeRef, lhs, rhs value.Value) (any, bool) {
	//nolint:staticcheck // Both sides were validated as parts of their objects.
	merged, err := typed.AsTypedUnvalidated(lhs, s, tr).Merge(typed.AsTypedUnvalidated(rhs, s, tr))
	if err != nil || merged.AsValue() == nil {
		return nil, false
	}
	return merged.AsValue().Unstructured(), true
}

// copier makes a value's unstructured form in new maps and lists, what
// structured-merge-diff's merge makes of a field only one side holds. It
// iterates every map with the one callback it binds when it is made, as a
// closure per map would be allocated per map.
type copier struct {
	a value.Allocator
	// maps are the maps being filled, the innermost last.
	maps  []map[string]any
	visit func(string, value.Value) bool
	// share: the live object's values belong to the merge (see
	// mergeTouched), so fields only it holds are not copied.
	share bool
}

func newCopier(a value.Allocator) *copier {
	c := &copier{a: a}
	c.visit = c.setEntry
	return c
}

// setEntry copies one entry of the map being filled.
func (c *copier) setEntry(key string, v value.Value) bool {
	val := c.copy(v)
	c.maps[len(c.maps)-1][key] = val
	return true
}

// only returns what the merge makes of a value only the live object
// holds: the value itself when it belongs to the merge, else a copy.
func (c *copier) only(v value.Value) any {
	if c.share {
		return v.Unstructured()
	}
	return c.copy(v)
}

// copy returns v's unstructured form.
func (c *copier) copy(v value.Value) any {
	switch {
	case v.IsNull():
		return nil
	case v.IsMap():
		m := v.AsMapUsing(c.a)
		out := make(map[string]any, m.Length())
		c.maps = append(c.maps, out)
		m.IterateUsing(c.a, c.visit)
		c.maps = c.maps[:len(c.maps)-1]
		c.a.Free(m)
		return out
	case v.IsList():
		l := v.AsListUsing(c.a)
		out := make([]any, l.Length())
		for i := range out {
			e := l.AtUsing(c.a, i)
			out[i] = c.copy(e)
			c.a.Free(e)
		}
		c.a.Free(l)
		return out
	}
	return v.Unstructured()
}

// findAtomics lists the paths of the atomic lists, maps and structs in a
// patch value, as upstream's findAtomics: it descends into declared struct
// fields and list elements only. Map keys are visited in sorted order
// (upstream: Go map order).
func findAtomics(path []fieldpath.PathElement, s *schema.Schema, tr schema.TypeRef, v value.Value) []string {
	a, ok := s.Resolve(tr)
	if !ok {
		return nil
	}
	var out []string
	if v.IsMap() && a.Map != nil {
		if a.Map.ElementRelationship == schema.Atomic {
			out = append(out, pathString(path))
		}
		m := v.AsMap()
		var keys []string
		m.Iterate(func(key string, _ value.Value) bool {
			keys = append(keys, key)
			return true
		})
		slices.Sort(keys)
		for _, key := range keys {
			if f, ok := a.Map.FindField(key); ok {
				val, _ := m.Get(key)
				out = append(out, findAtomics(append(path, fieldpath.PathElement{FieldName: &key}), s, f.Type, val)...)
			}
		}
	}
	if v.IsList() && a.List != nil {
		if a.List.ElementRelationship == schema.Atomic {
			out = append(out, pathString(path))
		}
		l := v.AsList()
		for i := range l.Length() {
			out = append(out, findAtomics(append(path, fieldpath.PathElement{Index: &i}), s, a.List.ElementType, l.At(i))...)
		}
	}
	return out
}

// atomScan reports whether findAtomics finds anything, visiting the same
// values without building paths or sorting keys. It iterates every map
// with the one callback it binds when it is made, as a closure per map
// would be allocated per map.
type atomScan struct {
	a value.Allocator
	s *schema.Schema
	// m is the type of the map being iterated; found ends the scan.
	m     *schema.Map
	found bool
	visit func(string, value.Value) bool
}

func newAtomScan(a value.Allocator) *atomScan {
	w := &atomScan{a: a}
	w.visit = w.entry
	return w
}

// entry scans one entry of the map being iterated.
func (w *atomScan) entry(key string, val value.Value) bool {
	if f, ok := w.m.FindField(key); ok {
		m := w.m
		if w.has(f.Type, val) {
			w.found = true
		}
		w.m = m
	}
	return !w.found
}

// hasAtomics reports whether v, of type tr in s, holds an atomic list, map
// or struct where findAtomics looks.
func (w *atomScan) hasAtomics(s *schema.Schema, tr schema.TypeRef, v value.Value) bool {
	w.s, w.found = s, false
	return w.has(tr, v)
}

func (w *atomScan) has(tr schema.TypeRef, v value.Value) bool {
	at, ok := w.s.Resolve(tr)
	if !ok {
		return false
	}
	a := w.a
	if v.IsMap() && at.Map != nil {
		if at.Map.ElementRelationship == schema.Atomic {
			return true
		}
		m := v.AsMapUsing(a)
		w.m = at.Map
		m.IterateUsing(a, w.visit)
		a.Free(m)
		if w.found {
			return true
		}
	}
	if v.IsList() && at.List != nil {
		if at.List.ElementRelationship == schema.Atomic {
			return true
		}
		l := v.AsListUsing(a)
		defer a.Free(l)
		for i := range l.Length() {
			c := l.AtUsing(a, i)
			found := w.has(at.List.ElementType, c)
			a.Free(c)
			if found {
				return true
			}
		}
	}
	return false
}

func pathString(path []fieldpath.PathElement) string {
	var sb strings.Builder
	for _, p := range path {
		sb.WriteString(p.String())
	}
	return sb.String()
}
