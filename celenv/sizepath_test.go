package celenv_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

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

// TestUntrackedMixedSizes checks that an expression over a long list of
// small values runs untracked when the bound for each path's own size
// allows it, although the bound for the longest list's size everywhere
// does not, and that the bound it charges is at least the measured cost.
func TestUntrackedMixedSizes(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{Params: true})
	pod := func(n int, limit string) map[string]any {
		cs := make([]any, n)
		for i := range cs {
			cs[i] = map[string]any{"image": "registry.example.com/web:1.0", "resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": limit}}}
		}
		return map[string]any{"spec": map[string]any{"containers": cs}}
	}
	params := map[string]any{"data": map[string]any{"registries": "quay.example.com/,registry.example.com/"}}
	for _, tc := range []struct {
		expr      string
		n         int
		untracked bool
	}{
		{"object.spec.containers.all(c, 'cpu' in c.resources.limits && 'memory' in c.resources.limits)", 1000, true},
		{"object.spec.containers.all(c, quantity(c.resources.limits.memory).compareTo(quantity('8Gi')) <= 0)", 1000, true},
		{"object.spec.containers.all(c, params.data.registries.split(',').exists(r, c.image.startsWith(r)))", 1000, true},
		{"object.spec.containers.all(c, params.data.registries.split(',').exists(r, c.image.startsWith(r)))", 1, true},
		// Quadratic in the list: no bound lets it run untracked.
		{"object.spec.containers.all(c, object.spec.containers.exists(d, d.image == c.image))", 1000, false},
	} {
		p := scope.Compile(tc.expr, celenv.Decls{}, cel.BoolType)
		if p.Err() != nil {
			t.Fatalf("%s: %v", tc.expr, p.Err())
		}
		in := &celenv.Input{Object: pod(tc.n, "1Gi"), Params: params}
		for range 2 { // the second time from the remembered bound
			estimated, err := scope.NewBatch(t.Context(), new(celenv.Session), in, runtimeBudget).Eval(p)
			if err != nil || estimated.Err != nil || estimated.Value != types.True {
				t.Fatalf("%s on %d containers: Eval() = %+v, %v", tc.expr, tc.n, estimated, err)
			}
			if estimated.Estimated != tc.untracked {
				t.Errorf("%s on %d containers: estimated %v (cost %d), want %v", tc.expr, tc.n, estimated.Estimated, estimated.Cost, tc.untracked)
			}
			measured, err := scope.NewBatch(t.Context(), &celenv.Session{Measure: true}, in, runtimeBudget).Eval(p)
			if err != nil || measured.Estimated {
				t.Fatalf("%s: measured Eval() = %+v, %v", tc.expr, measured, err)
			}
			if measured.Cost > estimated.Cost {
				t.Errorf("%s on %d containers: measured cost %d above the charged bound %d", tc.expr, tc.n, measured.Cost, estimated.Cost)
			}
		}
	}
}

// TestUntrackedMixedSizesConcurrent evaluates one program from several
// goroutines on lists of different lengths at once, so that its bounds per
// combination of sizes are estimated and remembered concurrently (run
// with -race).
func TestUntrackedMixedSizesConcurrent(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile("object.spec.containers.all(c, 'cpu' in c.resources.limits && 'memory' in c.resources.limits)", celenv.Decls{}, cel.BoolType)
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				cs := make([]any, 100*(1+(g+i)%8))
				for j := range cs {
					cs[j] = map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}}}
				}
				in := &celenv.Input{Object: map[string]any{"spec": map[string]any{"containers": cs}}}
				r, err := scope.NewBatch(context.Background(), new(celenv.Session), in, runtimeBudget).Eval(p)
				if err != nil || r.Value != types.True || !r.Estimated {
					t.Errorf("%d containers: Eval() = %+v, %v; want true, estimated", len(cs), r, err)
				}
			}
		})
	}
	wg.Wait()
}
