package mutation

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// randomEnv is a list of env entries named from a small alphabet, so that
// the two sides share names, in random orders, sometimes twice.
func randomEnv(r *rand.Rand, n int, tag string) []any {
	out := make([]any, n)
	for i := range out {
		name := string(rune('A' + r.IntN(5)))
		e := map[string]any{"name": name}
		if r.IntN(3) > 0 {
			e["value"] = fmt.Sprintf("%s%d", tag, i)
		}
		out[i] = e
	}
	return out
}

// TestMergeKeyedListRandom merges random env lists of one container (a
// list keyed by name) and checks mergeTouched against structured-merge-
// diff's whole merge: the object's order, the patch's new names after it,
// declined shapes (reordered, new names first, duplicates) merged by the
// library.
func TestMergeKeyedListRandom(t *testing.T) {
	tc, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(17, 2))
	handled := 0
	for i := range 3000 {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "a", "image": "a", "env": randomEnv(r, r.IntN(5), "l")},
			}}}},
		}}
		patch := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "a", "env": randomEnv(r, r.IntN(4), "r")},
			}}}},
		}}
		pt, err := tc.ObjectToTyped(patch)
		if err != nil {
			continue // duplicate names in the patch
		}
		lt, err := tc.ObjectToTyped(obj, typed.AllowDuplicates)
		if err != nil {
			t.Fatal(err)
		}
		want, err := lt.Merge(pt)
		if err != nil {
			t.Fatal(err)
		}
		// Owned: the object's data read anew, as a typed object's is.
		//nolint:staticcheck // The object was validated just above.
		owned := typed.AsTypedUnvalidated(value.NewValueInterface(copyJSON(obj.Object)), lt.Schema(), lt.TypeRef())
		for _, live := range []struct {
			tv    *typed.TypedValue
			owned bool
		}{{lt, false}, {owned, true}} {
			got, ok := mergeTouched(newCopier(value.NewFreelistAllocator()), live.tv, pt, live.owned)
			if !ok {
				t.Fatalf("case %d: mergeTouched declined", i)
			}
			if diff := cmp.Diff(want.AsValue().Unstructured(), any(got)); diff != "" {
				t.Fatalf("case %d (owned %v): %v into %v (-Merge +mergeTouched):\n%s", i, live.owned, patch.Object, obj.Object, diff)
			}
		}
		handled++
	}
	if handled < 1000 {
		t.Fatalf("only %d cases merged", handled)
	}
}
