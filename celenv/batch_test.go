package celenv_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"

	"github.com/vapkit/vapkit/celenv"
)

// TestBatchMeasuresWhenEstimatesExhaust runs a chain of a batch and its
// Next with budgets between the measured total cost and the estimated
// one: a session's batch must then measure and give exactly what a
// tracked batch gives, earlier Results and the first batch's included;
// below the measured total both fail alike.
func TestBatchMeasuresWhenEstimatesExhaust(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	scope.AddVariable("images", "object.spec.containers.map(c, c.image)")
	var progs []*celenv.Program
	for _, expr := range []string{
		"object.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
		"variables.images.exists(i, i.contains(':'))",
		"object.spec.containers.exists(c, c.image.matches('^[a-z./:0-9]+$'))",
	} {
		progs = append(progs, scope.Compile(expr, celenv.Decls{}, cel.BoolType))
	}
	charged := scope.Compile("'never shown: ' + object.spec.containers[0].image", celenv.Decls{}, cel.StringType)
	msg := scope.Compile("'images: ' + variables.images.join(', ')", celenv.Decls{}, cel.StringType)
	in := &celenv.Input{Object: map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"image": "registry.example.com/web:1.0"},
		map[string]any{"image": "registry.example.com/sidecar:2.1"},
	}}}}
	type outcome struct {
		First, Next []string
		Err         string
	}
	render := func(rs []celenv.Result) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%v %v %d %v", r.Value, r.Err, r.Cost, r.Estimated))
		}
		return out
	}
	run := func(session *celenv.Session, budget int64) (o outcome, total int64) {
		b := scope.NewBatch(t.Context(), session, in, budget)
		for _, p := range progs {
			if _, err := b.Eval(p); err != nil {
				return outcome{Err: err.Error()}, 0
			}
		}
		n := b.Next(in)
		if _, err := n.Charge(charged); err != nil {
			return outcome{Err: err.Error()}, 0
		}
		if _, err := n.Eval(msg); err != nil {
			return outcome{Err: err.Error()}, 0
		}
		for _, r := range append(b.Results(), n.Results()...) {
			total += r.Cost
		}
		return outcome{First: render(b.Results()), Next: render(n.Results())}, total
	}
	want, measured := run(nil, runtimeBudget)
	var session celenv.Session
	fast, estimated := run(&session, runtimeBudget)
	if !strings.HasPrefix(fast.Next[0], "<nil> <nil> ") || estimated <= measured {
		t.Fatalf("session run %v charges %d, measured %d: want the message charged, not evaluated, and estimates above measurements", fast, estimated, measured)
	}
	for _, budget := range []int64{measured, (measured + estimated) / 2, estimated - 1} {
		session.Reset()
		if got, _ := run(&session, budget); !cmp.Equal(want, got) {
			t.Errorf("budget %d (measured %d, estimated %d): mismatch (-tracked +session):\n%s", budget, measured, estimated, cmp.Diff(want, got))
		}
	}
	session.Reset()
	wantErr, _ := run(nil, measured-1)
	got, _ := run(&session, measured-1)
	if wantErr.Err != celenv.ErrCostBudgetExceeded.Error() || !cmp.Equal(wantErr, got) {
		t.Errorf("budget %d: session %+v, tracked %+v; want both %q", measured-1, got, wantErr, celenv.ErrCostBudgetExceeded)
	}
}
