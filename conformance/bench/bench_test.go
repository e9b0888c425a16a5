package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/casefile"
	"github.com/vapkit/vapkit/internal/celbridge"
	"github.com/vapkit/vapkit/policy"
)

// The benchmarks build their workload inside b.Run, so `go test` without
// -bench builds nothing.

// setupTimeout bounds each wait of the upstream plugin's start-up; it
// compiles 10,000 policies in over a minute on two cores.
const setupTimeout = 10 * time.Minute

func BenchmarkUpstream(b *testing.B) {
	baseline := runtime.NumGoroutine()
	for _, w := range Workloads() {
		// Prepared once for all -count runs of the workload.
		var d *upstream.Direct
		release := func() {}
		b.Run(w.Name, func(b *testing.B) {
			if d == nil {
				d, release = upstreamDirect(b, w)
			}
			runtime.GC()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				_, err := d.Validate(ctx)
				if msg := errMessage(err); (err == nil) != w.Allowed || msg != w.Message {
					b.Fatalf("upstream %s: allowed=%v message=%q, want allowed=%v message=%q", w.Name, err == nil, msg, w.Allowed, w.Message)
				}
			}
		})
		release()
		settle(baseline)
	}
}

// settle waits for a released upstream cluster's goroutines (informers,
// the plugin's workers) to stop and hands its memory back to the OS, so
// that the benchmarks after it do not share the two cores with that
// clean-up.
func settle(baseline int) {
	for deadline := time.Now().Add(30 * time.Second); runtime.NumGoroutine() > baseline && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	runtime.GC()
	debug.FreeOSMemory()
}

func BenchmarkVapkit(b *testing.B) {
	for _, w := range Workloads() {
		var ev *policy.Evaluator
		var req *policy.Request
		b.Run(w.Name, func(b *testing.B) {
			if ev == nil {
				ev, req, _ = vapkitSetup(b, w)
			}
			runtime.GC()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				d, err := ev.Evaluate(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if msg := statusMessage(d); d.Allowed != w.Allowed || msg != w.Message {
					b.Fatalf("vapkit %s: allowed=%v message=%q, want allowed=%v message=%q", w.Name, d.Allowed, msg, w.Allowed, w.Message)
				}
			}
		})
	}
}

// BenchmarkFloor evaluates the expressions vapkit evaluates for each
// workload with bare cel-go programs on prepared activations: cost-tracked
// where vapkit tracks, untracked where its estimates let it skip tracking.
// It is the physical limit of vapkit's design.
func BenchmarkFloor(b *testing.B) { benchmarkFloor(b, false) }

// BenchmarkFloorTracked is BenchmarkFloor with every expression
// cost-tracked, as the API server evaluates them: the limit of a design
// that always tracks.
func BenchmarkFloorTracked(b *testing.B) { benchmarkFloor(b, true) }

func benchmarkFloor(b *testing.B, tracked bool) {
	for _, w := range Workloads() {
		var f *floor
		b.Run(w.Name, func(b *testing.B) {
			if f == nil {
				f = floorSetup(b, w, tracked)
			}
			runtime.GC()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if failed := f.run(ctx); failed != f.wantFailed {
					b.Fatalf("floor %s: %d validations failed, want %d", w.Name, failed, f.wantFailed)
				}
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	const n = 1000
	name := fmt.Sprintf("%d-policies", n)
	b.Run("upstream/"+name, func(b *testing.B) {
		data, err := CompileCase(n)
		if err != nil {
			b.Fatal(err)
		}
		c, err := upstream.ParseCase(data, name)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			cl, err := upstream.NewCluster(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			cl.Close()
		}
	})
	b.Run("vapkit/"+name, func(b *testing.B) {
		data, err := CompileCase(n)
		if err != nil {
			b.Fatal(err)
		}
		c, err := casefile.Parse(data, name)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := c.Compile(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func errMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func statusMessage(d *policy.Decision) string {
	if d.Status == nil {
		return ""
	}
	return d.Status.Message
}

// upstreamDirect starts the upstream plugin on w and returns a direct
// handle on it; release stops the plugin.
func upstreamDirect(tb testing.TB, w Workload) (*upstream.Direct, func()) {
	tb.Helper()
	data, err := w.Case()
	if err != nil {
		tb.Fatal(err)
	}
	c, err := upstream.ParseCase(data, w.Name)
	if err != nil {
		tb.Fatal(err)
	}
	cl, err := upstream.NewClusterTimeout(context.Background(), c, setupTimeout)
	if err != nil {
		tb.Fatal(err)
	}
	d, release, err := cl.Direct()
	if err != nil {
		cl.Close()
		tb.Fatal(err)
	}
	return d, func() {
		release()
		cl.Close()
	}
}

// vapkitSetup compiles w with vapkit.
func vapkitSetup(tb testing.TB, w Workload) (*policy.Evaluator, *policy.Request, *casefile.Case) {
	tb.Helper()
	data, err := w.Case()
	if err != nil {
		tb.Fatal(err)
	}
	c, err := casefile.Parse(data, w.Name)
	if err != nil {
		tb.Fatal(err)
	}
	typedParams(tb, c)
	ev, req, err := c.Compile()
	if err != nil {
		tb.Fatal(err)
	}
	return ev, req, c
}

// typedParams turns the case's params of built-in kinds into their k8s.io/api
// types, as a typed informer hands them to the API server's plugin.
func typedParams(tb testing.TB, c *casefile.Case) {
	tb.Helper()
	for i, p := range c.Params {
		u, ok := p.(*unstructured.Unstructured)
		if !ok || !builtin.Scheme().Recognizes(u.GroupVersionKind()) {
			continue
		}
		raw, err := u.MarshalJSON()
		if err != nil {
			tb.Fatal(err)
		}
		obj, err := builtin.Scheme().New(u.GroupVersionKind())
		if err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(raw, obj); err != nil {
			tb.Fatal(err)
		}
		obj.GetObjectKind().SetGroupVersionKind(u.GroupVersionKind())
		c.Params[i] = obj
	}
}

// floor is the bare-CEL version of a workload: the programs vapkit
// evaluates for the request, each with its prepared activation.
type floor struct {
	evals      []floorEval
	wantFailed int
}

type floorEval struct {
	prog       cel.Program
	act        interpreter.Activation
	validation bool // a validation: false counts as failed
	condition  bool // a match condition: must be true
}

// run evaluates every program once and returns how many validations were
// false; an error or an unexpected type counts as a failure too.
func (f *floor) run(ctx context.Context) int {
	failed := 0
	for _, e := range f.evals {
		v, _, err := e.prog.ContextEval(ctx, e.act)
		switch {
		case err != nil:
			failed++
		case e.validation && v != types.True:
			failed++
		case e.condition && v != types.True:
			failed++
		}
	}
	return failed
}

// floorSetup finds out from vapkit's trace which (policy, param) pairs the
// request evaluates, and compiles their match conditions, validations,
// message expressions and audit annotations with vapkit's cel-go
// environment and program options: the API server's (cost tracking) when
// tracked is set or the trace says vapkit measured the expression's cost,
// otherwise the same without cost tracking. Each pair gets one activation holding
// the converted object, oldObject, params, request and namespace.
func floorSetup(tb testing.TB, w Workload, tracked bool) *floor {
	tb.Helper()
	ev, req, c := vapkitSetup(tb, w)
	d, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	toMap := func(o any) any {
		if o == nil {
			return nil
		}
		m, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	ar := c.AdmissionReview.Request.DeepCopy()
	ar.Object, ar.OldObject, ar.Options = k8sruntime.RawExtension{}, k8sruntime.RawExtension{}, k8sruntime.RawExtension{}
	ar.UID = ""
	requestVal := toMap(ar)
	requestVal.(map[string]any)["options"] = toMap(req.Options)
	var nsVal any
	for _, ns := range c.Namespaces {
		if ns.Name == req.Namespace {
			nsVal = toMap(ns)
		}
	}
	base := map[string]any{
		"object":          toMap(req.Object),
		"oldObject":       toMap(req.OldObject),
		"request":         requestVal,
		"namespaceObject": nsVal,
	}
	policies := map[string]*admissionregistrationv1.ValidatingAdmissionPolicy{}
	for _, p := range c.Policies {
		policies[p.Name] = p
	}
	untracked := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(celbridge.CheckFrequency)}
	compile := func(p *admissionregistrationv1.ValidatingAdmissionPolicy, expr string, authz, estimated bool) cel.Program {
		e := celbridge.Env(env, false, p.Spec.ParamKind != nil, authz)
		ast, iss := e.Compile(expr)
		if iss.Err() != nil {
			tb.Fatalf("%s: %v", expr, iss.Err())
		}
		opts := celbridge.ProgramOptions(env)
		if estimated && !tracked {
			opts = untracked
		}
		prog, err := e.Program(ast, opts...)
		if err != nil {
			tb.Fatal(err)
		}
		return prog
	}
	f := &floor{}
	for _, tr := range d.Trace {
		if tr.Binding == "" || (tr.Outcome != policy.Passed && tr.Outcome != policy.Failed) {
			continue
		}
		p := policies[tr.Policy]
		vars := map[string]any{}
		for k, v := range base {
			vars[k] = v
		}
		if tr.Param != nil {
			vars["params"] = paramValue(tb, c.Params, p, tr.Param.Namespace, tr.Param.Name)
		} else if p.Spec.ParamKind != nil {
			vars["params"] = nil
		}
		act, err := interpreter.NewActivation(vars)
		if err != nil {
			tb.Fatal(err)
		}
		estimated := map[string]bool{}
		for _, e := range tr.Expressions {
			estimated[e.Path.String()] = e.CostEstimated
		}
		path := func(parts ...any) string { return fmt.Sprintf("spec.%s[%d].%s", parts...) }
		for i, mc := range p.Spec.MatchConditions {
			f.evals = append(f.evals, floorEval{prog: compile(p, mc.Expression, true, estimated[path("matchConditions", i, "expression")]), act: act, condition: true})
		}
		for i, v := range p.Spec.Validations {
			f.evals = append(f.evals, floorEval{prog: compile(p, v.Expression, true, estimated[path("validations", i, "expression")]), act: act, validation: true})
		}
		for i, v := range p.Spec.Validations {
			if v.MessageExpression != "" {
				f.evals = append(f.evals, floorEval{prog: compile(p, v.MessageExpression, false, estimated[path("validations", i, "messageExpression")]), act: act})
			}
		}
		for i, a := range p.Spec.AuditAnnotations {
			f.evals = append(f.evals, floorEval{prog: compile(p, a.ValueExpression, false, estimated[path("auditAnnotations", i, "valueExpression")]), act: act})
		}
	}
	if len(f.evals) == 0 {
		tb.Fatalf("floor %s: vapkit evaluated nothing", w.Name)
	}
	f.wantFailed = f.run(context.Background())
	if want := 0; w.Allowed && f.wantFailed != want {
		tb.Fatalf("floor %s: %d validations failed on an admitted request", w.Name, f.wantFailed)
	}
	if !w.Allowed && f.wantFailed == 0 {
		tb.Fatalf("floor %s: no validation failed on a denied request", w.Name)
	}
	return f
}

// paramValue is the CEL form of the named param, with the paramKind's
// apiVersion and kind as the API server injects them.
func paramValue(tb testing.TB, ps []k8sruntime.Object, p *admissionregistrationv1.ValidatingAdmissionPolicy, ns, name string) any {
	tb.Helper()
	for _, o := range ps {
		acc, err := meta.Accessor(o)
		if err != nil || acc.GetName() != name || (acc.GetNamespace() != ns && !(ns == "default" && acc.GetNamespace() == "")) {
			continue
		}
		m, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			tb.Fatal(err)
		}
		m["apiVersion"], m["kind"] = p.Spec.ParamKind.APIVersion, p.Spec.ParamKind.Kind
		return m
	}
	tb.Fatalf("param %s/%s not found", ns, name)
	return nil
}
