package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/casefile"
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
		check := func(b *testing.B, err error) {
			if msg := errMessage(err); (err == nil) != w.Allowed || msg != w.Message {
				b.Fatalf("upstream %s: allowed=%v message=%q, want allowed=%v message=%q", w.Name, err == nil, msg, w.Allowed, w.Message)
			}
		}
		b.Run(w.Name, func(b *testing.B) {
			if d == nil {
				d, release = upstreamDirect(b, w)
			}
			runtime.GC()
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				_, err := d.Validate(ctx)
				check(b, err)
			}
			reportCPU(b, cpu)
		})
		if w.Parallel {
			b.Run(w.Name+"-parallel", func(b *testing.B) {
				if d == nil {
					d, release = upstreamDirect(b, w)
				}
				runtime.GC()
				b.ReportAllocs()
				cpu := cpuNow()
				b.RunParallel(func(pb *testing.PB) {
					dd := d.Fork()
					ctx := context.Background()
					for pb.Next() {
						_, err := dd.Validate(ctx)
						check(b, err)
					}
				})
				reportCPU(b, cpu)
			})
		}
		release()
		settle(baseline)
	}
	benchMutatingUpstream(b) // mutating_test.go
}

// cpuNow is the CPU time (user and system, all threads) the process has
// used, in nanoseconds.
func cpuNow() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU reports the CPU time per operation since start as cpu-ns/op:
// on a shared machine it drifts less than wall time, and it counts the
// garbage collector's work on other threads.
func reportCPU(b *testing.B, start int64) {
	if b.N > 0 && start > 0 {
		b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "cpu-ns/op")
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
		check := func(b *testing.B, d *policy.Decision, err error) {
			if err != nil {
				b.Fatal(err)
			}
			if msg := statusMessage(d); d.Allowed != w.Allowed || msg != w.Message {
				b.Fatalf("vapkit %s: allowed=%v message=%q, want allowed=%v message=%q", w.Name, d.Allowed, msg, w.Allowed, w.Message)
			}
		}
		b.Run(w.Name, func(b *testing.B) {
			if ev == nil {
				ev, req, _ = vapkitSetup(b, w)
			}
			runtime.GC()
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				d, err := ev.Evaluate(ctx, req)
				check(b, d, err)
			}
			reportCPU(b, cpu)
		})
		if w.Parallel {
			b.Run(w.Name+"-parallel", func(b *testing.B) {
				if ev == nil {
					ev, req, _ = vapkitSetup(b, w)
				}
				runtime.GC()
				b.ReportAllocs()
				cpu := cpuNow()
				b.RunParallel(func(pb *testing.PB) {
					ctx := context.Background()
					for pb.Next() {
						d, err := ev.Evaluate(ctx, req)
						check(b, d, err)
					}
				})
				reportCPU(b, cpu)
			})
		}
	}
	benchMutatingVapkit(b) // mutating_test.go
}

// BenchmarkFloor is the independent floor: the CEL programs the API server
// evaluates for each workload's request, compiled once with the upstream
// plugin's own compiler (k8s.io/apiserver's CompositedCompiler on its base
// environment, so with its cost tracking and limits), evaluated on
// activations prepared before the loop. No matching, no conversion, no
// decision: a lower bound for any implementation that evaluates the same
// expressions the way the API server does.
func BenchmarkFloor(b *testing.B) {
	for _, w := range Workloads() {
		benchFloor(b, w.Name, func(tb testing.TB) *floor { return floorSetup(tb, w) })
	}
	benchMutatingFloor(b) // mutating_test.go
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

// floor is the bare-CEL version of a workload: the programs the API server
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

// floorSetup finds out which (policy, binding, param) triples the request
// evaluates (from vapkit's trace, checked against the workload's stated
// count) and compiles what the API server evaluates for each with the
// upstream plugin's compiler, as its compilePolicy does: match conditions,
// validations and audit annotations, and the messageExpressions of the
// validations that fail (the only ones it evaluates). Each triple gets one
// activation holding the request's object, oldObject, params, request and
// namespaceObject in unstructured form.
// benchFloor runs one floor sub-benchmark, setting the floor up once for
// every b.N round and asserting the number of failed validations.
func benchFloor(b *testing.B, name string, setup func(testing.TB) *floor) {
	var f *floor
	b.Run(name, func(b *testing.B) {
		if f == nil {
			f = setup(b)
		}
		runtime.GC()
		ctx := context.Background()
		b.ReportAllocs()
		cpu := cpuNow()
		for b.Loop() {
			if failed := f.run(ctx); failed != f.wantFailed {
				b.Fatalf("floor %s: %d validations failed, want %d", name, failed, f.wantFailed)
			}
		}
		reportCPU(b, cpu)
	})
}

func floorSetup(tb testing.TB, w Workload) *floor {
	tb.Helper()
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		tb.Fatal(err)
	}
	return floorWith(tb, w, func(acc plugincel.ExpressionAccessor, decls plugincel.OptionalVariableDeclarations) cel.Program {
		r := compiler.CompileCELExpression(acc, decls, environment.StoredExpressions)
		if r.Error != nil {
			tb.Fatalf("%s: %v", acc.GetExpression(), r.Error)
		}
		return r.Program
	}, nil)
}

// floorCompiler compiles one expression of a policy.
type floorCompiler func(plugincel.ExpressionAccessor, plugincel.OptionalVariableDeclarations) cel.Program

// floorWith is floorSetup with the programs compiled by compile and, if
// convert is not nil, the variables' values passed through it.
func floorWith(tb testing.TB, w Workload, compile floorCompiler, convert func(any) any) *floor {
	tb.Helper()
	ev, req, c := vapkitSetup(tb, w)
	d, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	base := floorInputs(tb, c, req)
	policies := map[string]*admissionregistrationv1.ValidatingAdmissionPolicy{}
	for _, p := range c.Policies {
		policies[p.Name] = p
	}
	f := &floor{}
	evaluated := 0
	for _, tr := range d.Trace {
		if tr.Binding == "" || (tr.Outcome != policy.Passed && tr.Outcome != policy.Failed) {
			continue
		}
		evaluated++
		p := policies[tr.Policy]
		vars := maps.Clone(base)
		if tr.Param != nil {
			vars["params"] = paramValue(tb, c.Params, p, tr.Param.Namespace, tr.Param.Name)
		} else if p.Spec.ParamKind != nil {
			vars["params"] = nil
		}
		if convert != nil {
			for k, v := range vars {
				vars[k] = convert(v)
			}
		}
		act, err := interpreter.NewActivation(vars)
		if err != nil {
			tb.Fatal(err)
		}
		f.evals = append(f.evals, floorPolicyWith(compile, p, act)...)
	}
	if w.Evaluated != 0 && evaluated != w.Evaluated {
		tb.Fatalf("floor %s: the request evaluates %d (policy, binding, param) triples, the workload states %d", w.Name, evaluated, w.Evaluated)
	}
	if len(f.evals) == 0 {
		tb.Fatalf("floor %s: nothing evaluated", w.Name)
	}
	f.wantFailed = f.run(context.Background())
	if w.Allowed && f.wantFailed != 0 {
		tb.Fatalf("floor %s: %d validations failed on an admitted request", w.Name, f.wantFailed)
	}
	if !w.Allowed && f.wantFailed == 0 {
		tb.Fatalf("floor %s: no validation failed on a denied request", w.Name)
	}
	return f
}

// floorInputs are the request's variables in the unstructured form the API
// server's activation holds.
func floorInputs(tb testing.TB, c *casefile.Case, req *policy.Request) map[string]any {
	tb.Helper()
	toMap := func(o any) any {
		if o == nil || reflect.ValueOf(o).IsNil() {
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
	return map[string]any{
		"object":          toMap(req.Object),
		"oldObject":       toMap(req.OldObject),
		"request":         requestVal,
		"namespaceObject": nsVal,
	}
}

// floorPolicy compiles p's expressions as the upstream plugin does and
// pairs each with act; a messageExpression is kept only when its
// validation fails on act.
func floorPolicy(tb testing.TB, compiler *plugincel.CompositedCompiler, p *admissionregistrationv1.ValidatingAdmissionPolicy, act interpreter.Activation) []floorEval {
	tb.Helper()
	return floorPolicyWith(func(acc plugincel.ExpressionAccessor, decls plugincel.OptionalVariableDeclarations) cel.Program {
		r := compiler.CompileCELExpression(acc, decls, environment.StoredExpressions)
		if r.Error != nil {
			tb.Fatalf("%s: %v", acc.GetExpression(), r.Error)
		}
		return r.Program
	}, p, act)
}

// floorPolicyWith is floorPolicy with the programs compiled by compile.
func floorPolicyWith(compile floorCompiler, p *admissionregistrationv1.ValidatingAdmissionPolicy, act interpreter.Activation) []floorEval {
	hasParams := p.Spec.ParamKind != nil
	withAuthz := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	withoutAuthz := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: false}
	var out []floorEval
	for i := range p.Spec.MatchConditions {
		mc := (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
		out = append(out, floorEval{prog: compile(mc, withAuthz), act: act, condition: true})
	}
	for _, v := range p.Spec.Validations {
		prog := compile(&validating.ValidationCondition{Expression: v.Expression}, withAuthz)
		out = append(out, floorEval{prog: prog, act: act, validation: true})
		if val, _, err := prog.Eval(act); v.MessageExpression != "" && (err != nil || val != types.True) {
			out = append(out, floorEval{prog: compile(&validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}, withoutAuthz), act: act})
		}
	}
	for _, a := range p.Spec.AuditAnnotations {
		out = append(out, floorEval{prog: compile(&validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}, withAuthz), act: act})
	}
	return out
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
