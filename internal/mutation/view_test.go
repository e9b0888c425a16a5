package mutation

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/structured-merge-diff/v6/value"
	"sigs.k8s.io/yaml"
)

// TestViewerReads checks that a viewer reads a typed Deployment into the
// data the copier makes of it whatever the prior: none, the data itself,
// and that data with each node replaced (by every value of replacements)
// or removed in turn; and that it reuses the prior where nothing changed.
func TestViewerReads(t *testing.T) {
	d := &appsv1.Deployment{}
	if err := yaml.UnmarshalStrict([]byte(mergeLive), d); err != nil {
		t.Fatal(err)
	}
	a := value.NewFreelistAllocator()
	rv, err := value.NewValueReflect(d)
	if err != nil {
		t.Fatal(err)
	}
	want := newCopier(a).copy(rv)
	read := func(name string, prior any) (any, bool) {
		got, same := newViewer(a).read(rv, prior)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: viewer differs from copier (-copier +viewer):\n%s", name, diff)
		}
		return got, same
	}
	read("no prior", nil)
	prior := newCopier(a).copy(rv)
	if _, same := read("itself", prior); !same {
		t.Error("viewer did not reuse a prior equal to the object")
	}
	// A null entry under another name: as many entries, one missing.
	nulls := map[string]any{"a": nil, "b": "x"}
	renamed := map[string]any{"c": nil, "b": "x"}
	if got, same := newViewer(a).read(value.NewValueInterface(nulls), renamed); same || !cmp.Equal(got, any(nulls)) {
		t.Fatalf("null entry renamed: viewer read %v (reused %v)", got, same)
	}
	n := 0
	perturb(prior, "", func(path string, set func(any), del func()) {
		for i, r := range replacements {
			set(r)
			if _, same := read(fmt.Sprintf("%s = #%d", path, i), prior); same != cmp.Equal(want, prior) {
				t.Fatalf("%s = #%d: viewer reused %v, the prior is equal: %v", path, i, same, !same)
			}
			n++
		}
		if del != nil {
			del()
			if _, same := read(path+" removed", prior); same != cmp.Equal(want, prior) {
				t.Fatalf("%s removed: viewer reused %v, the prior is equal: %v", path, same, !same)
			}
		}
	})
	if n < 1000 {
		t.Fatalf("only %d priors read", n)
	}
}
