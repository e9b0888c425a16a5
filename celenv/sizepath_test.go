package celenv_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"

	"github.com/vapkit/vapkit/celenv"
)

// TestUntrackedSizesWhatIsRead checks that an untracked expression is
// charged the bound of the size class of the values it reads, not of
// whole inputs: a long string elsewhere in the object, or in a field it
// never reaches, leaves its bound alone, while one it reads raises it.
func TestUntrackedSizesWhatIsRead(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	scope.AddVariable("first", "object.spec.containers[0]")
	pod := func(image, note, name string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "p", "annotations": map[string]any{"note": note}},
			"spec": map[string]any{"containers": []any{
				map[string]any{"name": name, "image": image},
			}},
		}
	}
	short, long := "registry.example.com/web:1.0", strings.Repeat("x", 600)
	for _, tc := range []struct {
		expr string
		// raisedBy are the arguments of pod that, made long, must raise
		// the bound; the others must not.
		raisedBy []int
	}{
		{"object.spec.containers.all(c, c.image.matches('^registry'))", []int{0}},
		{"object.metadata.annotations.note.matches('x+')", []int{1}},
		{"variables.first.image.matches('^registry')", []int{0}},
		{"object.spec.containers[0].name.split('-').all(p, p.matches('x+'))", []int{2}},
		{"object.spec.containers.exists(c, c.name.matches('x+'))", []int{2}},
		{"has(object.metadata.labels) || object.metadata.name.matches('p')", nil},
	} {
		p := scope.Compile(tc.expr, celenv.Decls{}, cel.BoolType)
		if p.Err() != nil {
			t.Fatalf("%s: %v", tc.expr, p.Err())
		}
		cost := func(args ...string) int64 {
			b := scope.NewBatch(context.Background(), new(celenv.Session), &celenv.Input{Object: pod(args[0], args[1], args[2])}, runtimeBudget)
			r, err := b.Eval(p)
			if err != nil || !r.Estimated {
				t.Fatalf("%s: Eval() = %+v, %v; want an estimated cost", tc.expr, r, err)
			}
			return r.Cost
		}
		base := cost(short, "n", "web")
		for i := range 3 {
			args := []string{short, "n", "web"}
			args[i] = long
			got := cost(args...)
			if raised := got > base; raised != slices.Contains(tc.raisedBy, i) {
				t.Errorf("%s: a long argument %d gives bound %d against %d; want raised only by arguments %v", tc.expr, i, got, base, tc.raisedBy)
			}
		}
	}
}

// TestSessionReset checks that a Session remembers a value's size within a
// request and forgets it on Reset, even for a value at the same address.
func TestSessionReset(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile("object.metadata.name.matches('^a+$')", celenv.Decls{}, cel.BoolType)
	meta := map[string]any{"name": "aaa"}
	in := &celenv.Input{Object: map[string]any{"metadata": meta}}
	var session celenv.Session
	cost := func() int64 {
		b := scope.NewBatch(context.Background(), &session, in, runtimeBudget)
		r, err := b.Eval(p)
		if err != nil || !r.Estimated {
			t.Fatalf("Eval() = %+v, %v; want an estimated cost", r, err)
		}
		return r.Cost
	}
	short := cost()
	meta["name"] = strings.Repeat("a", 600)
	if got := cost(); got != short {
		t.Errorf("same request: bound %d, want the remembered %d", got, short)
	}
	session.Reset()
	if got := cost(); got <= short {
		t.Errorf("after Reset: bound %d, want more than %d for a longer name", got, short)
	}
}
