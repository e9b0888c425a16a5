package mutation

import (
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// viewer reads a value into unstructured data, the data the copier makes
// of it, reusing the parts of an earlier piece of data (the prior) that
// are equal to what it would make: a map or list equal to the prior's at
// the same place is the prior's own, so only the maps and lists on the
// way to what changed are made anew. Any prior gives the same data; one
// close to the value saves allocations. The prior and the data read are
// shared from then on: neither may be modified.
type viewer struct {
	a value.Allocator
	// entries are the entries of the maps being read, innermost last;
	// frames says where each map's entries start.
	entries []viewEntry
	frames  []viewFrame
	visit   func(string, value.Value) bool
}

type viewEntry struct {
	key string
	v   any
}

// viewFrame is a map being read: the prior's map at its place, where its
// entries start, and whether every entry so far equals the prior's.
type viewFrame struct {
	prior map[string]any
	start int
	same  bool
}

func newViewer(a value.Allocator) *viewer {
	w := &viewer{a: a}
	w.visit = w.entry
	return w
}

// read returns v's unstructured form and whether that is prior itself.
func (w *viewer) read(v value.Value, prior any) (any, bool) {
	switch {
	case v.IsNull():
		return nil, prior == nil
	case v.IsMap():
		return w.readMap(v, prior)
	case v.IsList():
		return w.readList(v, prior)
	case v.IsString():
		if p, ok := prior.(string); ok && p == v.AsString() {
			return prior, true
		}
	case v.IsInt():
		if p, ok := prior.(int64); ok && p == v.AsInt() {
			return prior, true
		}
	case v.IsBool():
		if p, ok := prior.(bool); ok && p == v.AsBool() {
			return prior, true
		}
	case v.IsFloat():
		// NaN never equals: it is read anew, as the copier would.
		if p, ok := prior.(float64); ok && p == v.AsFloat() {
			return prior, true
		}
	}
	return v.Unstructured(), false
}

// readMap reads a map entry by entry, keeping the prior's map when every
// entry is the prior's and no entry of the prior is missing.
func (w *viewer) readMap(v value.Value, prior any) (any, bool) {
	pm, _ := prior.(map[string]any)
	m := v.AsMapUsing(w.a)
	start := len(w.entries)
	w.frames = append(w.frames, viewFrame{prior: pm, start: start, same: pm != nil})
	m.IterateUsing(w.a, w.visit)
	w.a.Free(m)
	f := w.frames[len(w.frames)-1]
	w.frames = w.frames[:len(w.frames)-1]
	entries := w.entries[start:]
	defer func() { w.entries = w.entries[:start] }()
	if f.same && len(entries) == len(pm) {
		return prior, true
	}
	out := make(map[string]any, len(entries))
	for _, e := range entries {
		out[e.key] = e.v
	}
	return out, false
}

// entry reads one entry of the innermost map being read.
func (w *viewer) entry(key string, v value.Value) bool {
	f := &w.frames[len(w.frames)-1]
	var pv any
	found := false
	if f.prior != nil {
		pv, found = f.prior[key]
	}
	val, same := w.read(v, pv)
	// The recursion may have moved frames: look f up again.
	f = &w.frames[len(w.frames)-1]
	if !found || !same {
		f.same = false
	}
	w.entries = append(w.entries, viewEntry{key: key, v: val})
	return true
}

// readList reads a list element by element, keeping the prior's list
// when it has as many elements and each is the prior's.
func (w *viewer) readList(v value.Value, prior any) (any, bool) {
	pl, _ := prior.([]any)
	l := v.AsListUsing(w.a)
	defer w.a.Free(l)
	n := l.Length()
	same := pl != nil && len(pl) == n
	var out []any
	for i := range n {
		var pv any
		if i < len(pl) {
			pv = pl[i]
		}
		e := l.AtUsing(w.a, i)
		val, s := w.read(e, pv)
		w.a.Free(e)
		if same && s {
			continue
		}
		if out == nil {
			// The elements before i are the prior's.
			out = make([]any, n)
			copy(out, pl[:i])
		}
		same = false
		out[i] = val
	}
	if same {
		return prior, true
	}
	if out == nil {
		out = make([]any, n)
	}
	return out, false
}
