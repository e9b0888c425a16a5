package bench

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/interpreter"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/vapkit/vapkit/conformance/mapdiff"
	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/policy"
)

// The MAP benchmarks are sub-benchmarks of BenchmarkUpstream and
// BenchmarkVapkit (BenchmarkUpstream/map-cluster-100, ...), so run.sh and
// compare.sh treat them as any other workload.

// upstreamChain is the API server's policy admission of one MAP workload:
// upstream's mutating dispatcher (conformance/mapdiff's harness: the
// policies compiled by the mutating plugin's compiler, client-go's type
// converter, the chain's reinvocation pass) followed by the real
// validating plugin (conformance/upstream's Direct) on the mutated object.
type upstreamChain struct {
	m       *mapdiff.Mutator
	d       *upstream.Direct // nil when the workload has no VAP
	release func()
}

// run admits the request once: the mutated object, or the error that
// denied the request.
func (u *upstreamChain) run(ctx context.Context) (k8sruntime.Object, error) {
	obj, err := u.m.Run(ctx)
	if err != nil || u.d == nil {
		return obj, err
	}
	_, err = u.d.ValidateObject(ctx, obj)
	return obj, err
}

func upstreamChainSetup(tb testing.TB, w MutatingWorkload) *upstreamChain {
	tb.Helper()
	data, err := w.Case()
	if err != nil {
		tb.Fatal(err)
	}
	c, err := mapdiff.ParseCase(data, w.Name)
	if err != nil {
		tb.Fatal(err)
	}
	if len(c.Policies) != w.MutatingPolicies {
		tb.Fatalf("%s: %d MAPs, the workload states %d", w.Name, len(c.Policies), w.MutatingPolicies)
	}
	parse := func() *upstream.Case {
		vc, err := upstream.ParseCase(c.Rest, w.Name)
		if err != nil {
			tb.Fatal(err)
		}
		return vc
	}
	ctx, cancel := context.WithCancel(context.Background())
	m, err := mapdiff.NewMutator(ctx, c, parse())
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	u := &upstreamChain{m: m, release: cancel}
	vc := parse()
	if len(vc.Policies) != w.ValidatingPolicies {
		cancel()
		tb.Fatalf("%s: %d VAPs, the workload states %d", w.Name, len(vc.Policies), w.ValidatingPolicies)
	}
	if len(vc.Policies) > 0 {
		cl, err := upstream.NewClusterTimeout(context.Background(), vc, setupTimeout)
		if err != nil {
			cancel()
			tb.Fatal(err)
		}
		d, release, err := cl.Direct()
		if err != nil {
			cl.Close()
			cancel()
			tb.Fatal(err)
		}
		u.d = d
		u.release = func() {
			release()
			cl.Close()
			cancel()
		}
	}
	return u
}

// mutatedWant is the object upstream's chain produces for w: what both
// sides must produce on every iteration.
func mutatedWant(tb testing.TB, w MutatingWorkload) k8sruntime.Object {
	tb.Helper()
	u := upstreamChainSetup(tb, w)
	defer u.release()
	obj, err := u.run(context.Background())
	if msg := errMessage(err); (err == nil) != w.Allowed || msg != w.Message {
		tb.Fatalf("upstream %s: allowed=%v message=%q, want allowed=%v message=%q", w.Name, err == nil, msg, w.Allowed, w.Message)
	}
	return obj
}

// checkMutated fails tb unless got equals want.
func checkMutated(tb testing.TB, side, name string, got, want k8sruntime.Object) {
	// reflect.DeepEqual holds for both sides' objects; the semantic
	// comparison is the fallback that decides.
	if !reflect.DeepEqual(got, want) && !equality.Semantic.DeepEqual(got, want) {
		tb.Fatalf("%s %s: the mutated object differs from upstream's", side, name)
	}
}

func benchMutatingUpstream(b *testing.B) {
	baseline := runtime.NumGoroutine()
	for _, w := range MutatingWorkloads() {
		var u *upstreamChain
		var want k8sruntime.Object
		b.Run(w.Name, func(b *testing.B) {
			if u == nil {
				want = mutatedWant(b, w)
				u = upstreamChainSetup(b, w)
			}
			runtime.GC()
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				obj, err := u.run(ctx)
				if msg := errMessage(err); (err == nil) != w.Allowed || msg != w.Message {
					b.Fatalf("upstream %s: allowed=%v message=%q, want allowed=%v message=%q", w.Name, err == nil, msg, w.Allowed, w.Message)
				}
				checkMutated(b, "upstream", w.Name, obj, want)
			}
			reportCPU(b, cpu)
		})
		if u != nil {
			u.release()
		}
		settle(baseline)
	}
}

// vapkitMutatingSetup compiles w with vapkit, MAPs and VAPs in one
// Evaluator as casefile builds it.
func vapkitMutatingSetup(tb testing.TB, w MutatingWorkload) (*policy.Evaluator, *policy.Request) {
	tb.Helper()
	ev, req, _ := vapkitSetup(tb, Workload{Name: w.Name, build: w.build})
	return ev, req
}

// vapkitObject is the object the validating policies saw: the mutated one,
// or the request's when nothing changed it.
func vapkitObject(d *policy.Decision, req *policy.Request) k8sruntime.Object {
	if d.Object != nil {
		return d.Object
	}
	return req.Object
}

func benchMutatingVapkit(b *testing.B) {
	for _, w := range MutatingWorkloads() {
		var ev *policy.Evaluator
		var req *policy.Request
		var want k8sruntime.Object
		b.Run(w.Name, func(b *testing.B) {
			if ev == nil {
				want = mutatedWant(b, w)
				ev, req = vapkitMutatingSetup(b, w)
			}
			runtime.GC()
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				d, err := ev.Evaluate(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if msg := statusMessage(d); d.Allowed != w.Allowed || msg != w.Message {
					b.Fatalf("vapkit %s: allowed=%v message=%q, want allowed=%v message=%q", w.Name, d.Allowed, msg, w.Allowed, w.Message)
				}
				checkMutated(b, "vapkit", w.Name, vapkitObject(d, req), want)
			}
			reportCPU(b, cpu)
		})
	}
}

// invocations counts the mutating (policy, binding, param) invocations of
// a decision, the reinvocation pass included.
func invocations(d *policy.Decision) int {
	n := 0
	for _, tr := range d.Mutations {
		if tr.Binding != "" && tr.Outcome != policy.NotMatched && tr.Outcome != policy.Skipped {
			n++
		}
	}
	return n
}

// TestMutatingWorkloads checks every MAP workload on both sides: the
// decision, the stated numbers of policies and invocations, and that
// vapkit's mutated object is upstream's.
func TestMutatingWorkloads(t *testing.T) {
	for _, w := range MutatingWorkloads() {
		t.Run(w.Name, func(t *testing.T) {
			if testing.Short() && w.Name == "map-1000-containers" {
				t.Skip("large workload; run without -short")
			}
			want := mutatedWant(t, w)
			ev, req := vapkitMutatingSetup(t, w)
			d, err := ev.Evaluate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if msg := statusMessage(d); d.Allowed != w.Allowed || msg != w.Message {
				t.Fatalf("vapkit: allowed=%v message=%q, want allowed=%v message=%q", d.Allowed, msg, w.Allowed, w.Message)
			}
			if got := invocations(d); got != w.Invocations {
				for _, tr := range d.Mutations {
					t.Log(tr.String())
				}
				t.Errorf("vapkit: %d mutating invocations, the workload states %d", got, w.Invocations)
			}
			if d.Object == nil || equality.Semantic.DeepEqual(d.Object, req.Object) {
				t.Errorf("vapkit: the MAPs did not change the object")
			}
			if !equality.Semantic.DeepEqual(vapkitObject(d, req), want) {
				t.Errorf("vapkit's mutated object differs from upstream's:\nvapkit:   %s\nupstream: %s", jsonOf(t, vapkitObject(d, req)), jsonOf(t, want))
			}
		})
	}
}

func jsonOf(t *testing.T, o k8sruntime.Object) string {
	t.Helper()
	m, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return fmt.Sprint(err)
	}
	return fmt.Sprint(m)
}

func benchMutatingFloor(b *testing.B) {
	for _, w := range MutatingWorkloads() {
		benchFloor(b, w.Name, func(tb testing.TB) *floor { return mutatingFloorSetup(tb, w) })
	}
}

// mutatingFloorSetup is floorSetup for a MAP workload: the CEL programs the
// API server evaluates for the request, compiled with the upstream
// plugins' compiler, without matching, merging, patching or conversion.
// For each mutating invocation (taken from vapkit's trace and checked
// against the workload's count): its match conditions and mutation
// expressions (with the patch types declared), on the request's object,
// or on upstream's mutated object in the reinvocation pass; then what
// floorSetup compiles for each validating invocation, on upstream's
// mutated object.
func mutatingFloorSetup(tb testing.TB, w MutatingWorkload) *floor {
	tb.Helper()
	want := mutatedWant(tb, w)
	ev, req, c := vapkitSetup(tb, Workload{Name: w.Name, build: w.build})
	d, err := ev.Evaluate(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	if n := invocations(d); n != w.Invocations {
		tb.Fatalf("floor %s: %d mutating invocations, the workload states %d", w.Name, n, w.Invocations)
	}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		tb.Fatal(err)
	}
	base := floorInputs(tb, c, req)
	mutated := maps.Clone(base)
	mutatedMap, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		tb.Fatal(err)
	}
	mutated["object"] = mutatedMap
	mps := map[string]*admissionregistrationv1.MutatingAdmissionPolicy{}
	for _, p := range c.MutatingPolicies {
		mps[p.Name] = p
	}
	activation := func(in map[string]any, paramKind *admissionregistrationv1.ParamKind, param *k8stypes.NamespacedName) interpreter.Activation {
		vars := maps.Clone(in)
		if param != nil {
			vars["params"] = paramValue(tb, c.Params, &admissionregistrationv1.ValidatingAdmissionPolicy{
				Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: paramKind}}, param.Namespace, param.Name)
		} else if paramKind != nil {
			vars["params"] = nil
		}
		act, err := interpreter.NewActivation(vars)
		if err != nil {
			tb.Fatal(err)
		}
		return act
	}
	f := &floor{}
	for _, tr := range d.Mutations {
		if tr.Binding == "" || tr.Outcome == policy.NotMatched || tr.Outcome == policy.Skipped {
			continue
		}
		p := mps[tr.Policy]
		in := base
		if tr.Reinvoked {
			in = mutated
		}
		f.evals = append(f.evals, floorMutatingPolicy(tb, compiler, p, activation(in, p.Spec.ParamKind, tr.Param))...)
	}
	vps := map[string]*admissionregistrationv1.ValidatingAdmissionPolicy{}
	for _, p := range c.Policies {
		vps[p.Name] = p
	}
	for _, tr := range d.Trace {
		if tr.Binding == "" || (tr.Outcome != policy.Passed && tr.Outcome != policy.Failed) {
			continue
		}
		p := vps[tr.Policy]
		f.evals = append(f.evals, floorPolicy(tb, compiler, p, activation(mutated, p.Spec.ParamKind, tr.Param))...)
	}
	f.wantFailed = f.run(context.Background())
	if w.Allowed && f.wantFailed != 0 {
		tb.Fatalf("floor %s: %d programs failed on an admitted request", w.Name, f.wantFailed)
	}
	return f
}

// floorMutatingPolicy compiles p's match conditions and mutations as the
// mutating plugin does and pairs each with act.
func floorMutatingPolicy(tb testing.TB, compiler *plugincel.CompositedCompiler, p *admissionregistrationv1.MutatingAdmissionPolicy, act interpreter.Activation) []floorEval {
	tb.Helper()
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	compile := func(acc plugincel.ExpressionAccessor, o plugincel.OptionalVariableDeclarations) cel.Program {
		r := compiler.CompileCELExpression(acc, o, environment.StoredExpressions)
		if r.Error != nil {
			tb.Fatalf("%s: %v", acc.GetExpression(), r.Error)
		}
		return r.Program
	}
	var out []floorEval
	for i := range p.Spec.MatchConditions {
		mc := (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
		out = append(out, floorEval{prog: compile(mc, opts), act: act, condition: true})
	}
	popts := opts
	popts.HasPatchTypes = true
	for _, m := range p.Spec.Mutations {
		var acc plugincel.ExpressionAccessor
		switch {
		case m.ApplyConfiguration != nil:
			acc = &patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}
		case m.JSONPatch != nil:
			acc = &patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}
		default:
			tb.Fatalf("%s: a mutation without an expression", p.Name)
		}
		out = append(out, floorEval{prog: compile(acc, popts), act: act})
	}
	return out
}
