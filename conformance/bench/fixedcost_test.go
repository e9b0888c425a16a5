package bench

import (
	"context"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/cel/library"
)

// BenchmarkFixedCost measures what vapkit spends on a request beyond the
// CEL it runs, on the one-policy workload (and cluster-10 for scale).
// Each iteration runs vapkit's Evaluate and then the bare CEL: the same
// expressions the API server evaluates for the request (as the floor
// picks them), compiled with plain cel-go and the API server's libraries
// without cost tracking (see bareCompiler), run on the request's variables
// converted to CEL values before the loop, all the way down (celTree). No matching, no
// conversion, no tracking, no decision: the least any evaluator spends on
// the expressions themselves. It reports the wall time per request of
// each half (vapkit-ns/op, cel-ns/op) and their difference (fixed-ns/op),
// vapkit's fixed cost. The halves alternate within every iteration, so
// they share the machine's speed of the moment; garbage collection that
// vapkit's allocations cause on other threads is not in vapkit-ns/op.
func BenchmarkFixedCost(b *testing.B) {
	for _, w := range Workloads() {
		if w.Name != "one-policy" && w.Name != "cluster-10" {
			continue
		}
		b.Run(w.Name, func(b *testing.B) {
			ev, req, _ := vapkitSetup(b, w)
			bare := floorWith(b, w, bareCompiler(b), celTree)
			ctx := context.Background()
			b.ReportAllocs()
			var vapkit, bareCEL time.Duration
			for b.Loop() {
				t0 := time.Now()
				d, err := ev.Evaluate(ctx, req)
				t1 := time.Now()
				failed := bare.run(ctx)
				t2 := time.Now()
				if err != nil || d.Allowed != w.Allowed || statusMessage(d) != w.Message {
					b.Fatalf("vapkit %s: %v, %v", w.Name, statusMessage(d), err)
				}
				if failed != bare.wantFailed {
					b.Fatalf("bare CEL %s: %d validations failed, want %d", w.Name, failed, bare.wantFailed)
				}
				vapkit += t1.Sub(t0)
				bareCEL += t2.Sub(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(vapkit)/n, "vapkit-ns/op")
			b.ReportMetric(float64(bareCEL)/n, "cel-ns/op")
			b.ReportMetric(float64(vapkit-bareCEL)/n, "fixed-ns/op")
		})
	}
}

// bareCompiler compiles expressions with plain cel-go: the standard
// library and the libraries of the API server that the workloads' expressions
// use (strings, quantity, regex, lists, URLs), every variable dynamic, and
// builds programs without cost tracking (the API server's environment
// always tracks).
func bareCompiler(tb testing.TB) floorCompiler {
	env, err := cel.NewEnv(
		cel.HomogeneousAggregateLiterals(), cel.DefaultUTCTimeZone(true), cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)), library.Quantity(), library.Regex(), library.Lists(), library.URLs(),
		cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType), cel.Variable("params", cel.DynType),
		cel.Variable("namespaceObject", cel.DynType))
	if err != nil {
		tb.Fatal(err)
	}
	return func(acc plugincel.ExpressionAccessor, _ plugincel.OptionalVariableDeclarations) cel.Program {
		ast, iss := env.Compile(acc.GetExpression())
		if iss.Err() != nil {
			tb.Fatalf("%s: %v", acc.GetExpression(), iss.Err())
		}
		prog, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize))
		if err != nil {
			tb.Fatal(err)
		}
		return prog
	}
}

// celTree converts v, a JSON-like Go value, to CEL values all the way down,
// so that the bare CEL reads maps and lists without converting anything.
func celTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[ref.Val]ref.Val, len(x))
		for k, e := range x {
			m[types.String(k)] = celTree(e).(ref.Val)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, m)
	case []any:
		l := make([]ref.Val, len(x))
		for i, e := range x {
			l[i] = celTree(e).(ref.Val)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, l)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}
