package celvalue_test

import (
	"fmt"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// TestTypedListIterators interleaves iterators of one list, the first
// one (which lives in the list) among them, over lists of structs that
// convert together (at most 8 elements) or in blocks, and of strings:
// each iterator yields every element in order, whatever the others did.
func TestTypedListIterators(t *testing.T) {
	for _, n := range []int{1, 3, 8, 9, 20} {
		containers := make([]corev1.Container, n)
		args := make([]string, n)
		for i := range containers {
			containers[i].Name = fmt.Sprintf("c%d", i)
			args[i] = fmt.Sprintf("a%d", i)
		}
		obj := &corev1.Container{Args: args}
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: containers}}
		lists := map[string]traits.Lister{
			"structs": field(celvalue.TypedValue(pod), types.String("spec"), types.String("containers")).(traits.Lister),
			"strings": field(celvalue.TypedValue(obj), types.String("args")).(traits.Lister),
		}
		for kind, l := range lists {
			name := func(v any) string {
				if m, ok := v.(traits.Mapper); ok {
					return fmt.Sprint(m.Get(types.String("name")))
				}
				return fmt.Sprint(v)
			}
			want := make([]string, n)
			for i := range n {
				want[i] = name(l.Get(types.Int(i)))
			}
			first := l.Iterator()
			var got [2][]string
			got[0] = append(got[0], name(first.Next()))
			second := l.Iterator()
			for second.HasNext() == types.True {
				got[1] = append(got[1], name(second.Next()))
				third := l.Iterator()
				if third.HasNext() == types.True {
					if v := name(third.Next()); v != want[0] {
						t.Errorf("%s of %d: a new iterator starts at %s, want %s", kind, n, v, want[0])
					}
				}
			}
			for first.HasNext() == types.True {
				got[0] = append(got[0], name(first.Next()))
			}
			for i := range 2 {
				if fmt.Sprint(got[i]) != fmt.Sprint(want) {
					t.Errorf("%s of %d: iterator %d yields %v, want %v", kind, n, i, got[i], want)
				}
			}
		}
	}
}
