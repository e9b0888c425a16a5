// The mutating plugin's delegate: each invocation's match conditions and
// mutations, on the object as the earlier invocations left it.

package policy

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/celvalue"
	"github.com/vapkit/vapkit/internal/mutation"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// versionedObject is the request's object in one matched kind, as the
// mutations of one pass leave it.
type versionedObject struct {
	kind schema.GroupVersionKind
	obj  runtime.Object
	old  any // CEL value of oldObject
	err  error
	// dirty: a mutation succeeded on this object in this pass.
	dirty bool
	// prior is the unstructured result of the last apply configuration
	// on a typed obj, which the next one reuses (mutation.ApplyReusing);
	// it is never modified.
	prior map[string]any
}

// versionedSet holds the objects of one pass per kind, each converted from
// the object the pass started with.
type versionedSet struct {
	st   *requestState
	list []*versionedObject
	// prior is what the objects' first apply configuration reuses.
	prior map[string]any
}

// get returns the object in kind, converting it on first use.
func (vs *versionedSet) get(kind schema.GroupVersionKind) (*versionedObject, error) {
	if kind.Empty() {
		kind = vs.st.req.Kind
	}
	for _, vo := range vs.list {
		if vo.kind == kind {
			return vo, nil
		}
	}
	convert := func(obj runtime.Object) (runtime.Object, error) {
		if obj == nil {
			return nil, nil
		}
		if kind != vs.st.req.Kind && obj.GetObjectKind().GroupVersionKind() != kind {
			converted, err := vs.st.e.converter.Convert(obj, kind)
			if err != nil {
				return nil, err
			}
			return builtin.Typed(converted)
		}
		// Mutations never modify the object they are given (every result
		// is a new object), so only setting the kind needs a copy.
		if obj.GetObjectKind().GroupVersionKind() != kind {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(kind)
		}
		// The server holds built-in objects typed: patches to them decode
		// strictly into their type.
		return builtin.Typed(obj)
	}
	obj, err := convert(vs.st.req.Object)
	if err != nil {
		return nil, err
	}
	old, err := convert(vs.st.req.OldObject)
	if err != nil {
		return nil, err
	}
	vo := &versionedObject{kind: kind, obj: obj, prior: vs.prior}
	if old != nil {
		if vo.old, err = objectValue(old, nil); err != nil {
			vo.err = fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err)
		}
	}
	vs.list = append(vs.list, vo)
	return vo, nil
}

// dispatch runs the invocations in order, as the mutating plugin's
// dispatcher does. It returns the policy errors, the request object when
// the pass changed it, or the status of an error that aborts the request
// whatever the failurePolicy.
func (ph *mutationPhase) dispatch(ctx context.Context, st *requestState, vs *versionedSet, invs []invocation, reinvocation bool) ([]policyError, runtime.Object, *metav1.Status, error) {
	var errs []policyError
	var last *versionedObject
	for _, inv := range invs {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		used, perrs, status := ph.invoke(ctx, st, vs, inv, reinvocation)
		if status != nil {
			return nil, nil, status, nil
		}
		errs = append(errs, perrs...)
		if used != nil {
			last = used
		}
	}
	if last == nil || !last.dirty {
		return errs, nil, nil, nil
	}
	ph.prior = last.prior
	// Any successful mutation, even one that changed nothing, asks for
	// reinvocation, and the last object used is written back.
	ph.flush()
	ph.shouldReinvoke = true
	out := last.obj
	if last.kind != st.req.Kind {
		converted, err := ph.e.converter.Convert(out, st.req.Kind)
		if err != nil {
			return nil, nil, statusFor(apierrors.NewInternalError(fmt.Errorf("failed to convert object: %w", err))), nil
		}
		out = converted
	}
	return errs, out, nil, nil
}

// invoke runs one invocation: its match conditions, then its mutations. It
// returns the object its mutations worked on (nil when none ran), its
// policy errors, or the status that aborts the request.
func (ph *mutationPhase) invoke(ctx context.Context, st *requestState, vs *versionedSet, inv invocation, reinvocation bool) (*versionedObject, []policyError, *metav1.Status) {
	cm := inv.cm
	if n := compiledCount(cm); n != len(cm.mutations) {
		return nil, nil, statusFor(apierrors.NewInternalError(fmt.Errorf("expected %v compiled evaluators for policy %v, got %v", len(cm.mutations), cm.policy.Name, n)))
	}
	vo, err := vs.get(inv.res.Kind)
	if err != nil {
		return nil, nil, statusFor(apierrors.NewInternalError(err))
	}
	pv, pname := st.paramValue(cm.base, inv.param)
	tr := PolicyTrace{Policy: cm.policy.Name, Binding: inv.binding.binding.Name, Param: pname, Reinvoked: reinvocation}
	tr.Expressions = st.exprTraces(cm.traced())
	defer func() { ph.trace = append(ph.trace, tr) }()
	if len(cm.base.matchConditions) > 0 {
		matched, err := ph.matchConditions(ctx, st, inv, vo, pv, &tr)
		if err != nil {
			tr.Outcome, tr.Err = Errored, err
			return nil, []policyError{{cm: cm, binding: tr.Binding, err: err, reason: metav1.StatusReasonInvalid}}, nil
		}
		if !matched {
			tr.Outcome = NotMatched
			return nil, nil, nil
		}
	}
	key := invocationKey{policy: cm.policy.Name, binding: tr.Binding}
	if pname != nil {
		key.param = *pname
	}
	if reinvocation && !ph.reinvoke[key] {
		tr.Outcome, tr.Err = Skipped, errNotReinvoked
		return nil, nil, nil
	}
	before := vo.obj
	tr.Outcome = Passed
	var errs []policyError
	// changes counts the mutations that changed the object they were given
	// (semantically): with none the object is still equal to before, with
	// one it differs from it (the comparison is an equivalence).
	changes := 0
	for _, m := range cm.mutations {
		out, et, vars, err := ph.mutateOne(ctx, st, inv, vo, pv, m)
		tr.Expressions = append(tr.Expressions, et)
		tr.Cost += et.Cost
		// Each mutation evaluates the variables it reads afresh, on the
		// object as the earlier mutations left it: they are traced after
		// it, once per mutation.
		for _, v := range vars {
			if vt, ok := variableTrace(cm.base.varPaths[v.Name], v.Value); ok {
				tr.Expressions = append(tr.Expressions, vt)
			}
		}
		if err != nil {
			tr.Outcome, tr.Err = Errored, err
			if se := (*apierrors.StatusError)(nil); errors.As(err, &se) {
				return nil, nil, statusFor(se)
			}
			errs = append(errs, policyError{cm: cm, binding: tr.Binding, err: err, reason: metav1.StatusReasonInvalid})
			continue
		}
		vo.obj, vo.dirty = out, true
		if et.Value == valueChanged {
			changes++
		}
	}
	if tr.Err != nil && cm.base.failurePolicy == admissionregistrationv1.Ignore {
		tr.Err = fmt.Errorf("ignored under failurePolicy Ignore: %w", tr.Err)
	}
	if changes == 1 || changes > 1 && !semanticEqual(before, vo.obj) {
		ph.flush()
		ph.shouldReinvoke = true
	}
	if cm.ifNeeded {
		ph.previouslyInvoked[key] = true
	}
	if len(cm.mutations) == 0 {
		return nil, errs, nil
	}
	return vo, errs, nil
}

// The Value of a mutation's trace entry: whether it changed the object.
const (
	valueChanged   = "changed"
	valueUnchanged = "unchanged"
)

// errNotReinvoked explains a trace entry of the reinvocation pass for an
// invocation that is not eligible.
var errNotReinvoked = errors.New("not reinvoked: reinvocationPolicy is not IfNeeded, or nothing changed the object after it ran")

// traced is how many expression entries an invocation of cm traces at
// most: its match conditions and the variables they read, then each
// mutation and the variables it read.
func (cm *compiledMutating) traced() int {
	vars := len(cm.base.varPaths)
	return len(cm.base.matchConditions) + vars + len(cm.mutations)*(1+vars)
}

// compiledCount is the number of mutations the API server compiles a
// patcher for.
func compiledCount(cm *compiledMutating) int {
	n := 0
	for _, m := range cm.mutations {
		if m.prog != nil {
			n++
		}
	}
	return n
}

// matchConditions evaluates the policy's match conditions against the
// current object, without namespaceObject and with the request's own
// resource, as the mutating plugin's matcher does.
func (ph *mutationPhase) matchConditions(ctx context.Context, st *requestState, inv invocation, vo *versionedObject, pv any, tr *PolicyTrace) (bool, error) {
	cp := inv.cm.base
	vobj := &versionedObjects{kind: vo.kind, oldObject: vo.old, err: vo.err}
	if vo.err == nil {
		o, err := objectValue(vo.obj, nil)
		if err != nil {
			vobj.err = fmt.Errorf("failed to prepare object variable for evaluation: %w", err)
		}
		vobj.object = o
	}
	in := &celenv.Input{Object: vobj.object, OldObject: vobj.oldObject, Params: pv, Request: st.lazyRequest(st.req.Resource, vo.kind)}
	if cp.readsAuthorizer {
		in.Authorizer, in.RequestResource = st.authorizerValues(ctx)
	}
	return st.matchConditions(ctx, cp, in, vobj, tr)
}

// mutateOne applies one mutation to vo's object and returns the result,
// as the mutating plugin's dispatchOne and patchers do. An
// *apierrors.StatusError aborts the request.
func (ph *mutationPhase) mutateOne(ctx context.Context, st *requestState, inv invocation, vo *versionedObject, pv any, m compiledMutation) (_ runtime.Object, _ ExprTrace, vars []celenv.Variable, _ error) {
	et := ExprTrace{Path: m.path, Outcome: Passed}
	fail := func(err error) (runtime.Object, ExprTrace, []celenv.Variable, error) {
		et.Outcome, et.Err = Errored, err.Error()
		return nil, et, vars, err
	}
	tc := ph.e.converters
	if tc == nil || !tc.KnowsGroupVersion(vo.kind.GroupVersion()) {
		return fail(apierrors.NewServiceUnavailable(fmt.Sprintf("Resource kind %s not found. There can be a delay between when CustomResourceDefinitions are created and when they are available.", vo.kind)))
	}
	if ce := m.prog.Err(); ce != nil {
		return fail(errors.New(ce.Detail))
	}
	if vo.err != nil {
		return fail(vo.err)
	}
	objVal, err := objectValue(vo.obj, nil)
	if err != nil {
		return fail(fmt.Errorf("failed to prepare object variable for evaluation: %w", err))
	}
	in := &celenv.Input{Object: objVal, OldObject: vo.old, Params: pv, Request: st.lazyRequest(inv.res.Resource, vo.kind)}
	if st.ns != nil {
		in.Namespace = celvalue.Lazy(st.namespaceTrimmed)
	}
	if inv.cm.base.readsAuthorizer {
		in.Authorizer, in.RequestResource = st.authorizerValues(ctx)
	}
	// Every mutation has a budget of its own; its variables are evaluated
	// afresh, against the current object.
	b := inv.cm.base.scope.NewBatch(ctx, st.measuringSession(), in, runtimeBudget)
	r, err := b.Eval(m.prog)
	et.Cost = r.Cost
	vars = b.Variables()
	if err != nil {
		return fail(err)
	}
	if r.Err != nil {
		return fail(r.Err)
	}
	out, err := patchWith(tc, m.patchType, r, vo)
	if err != nil {
		return fail(err)
	}
	if out, err = mutation.Typed(out, vo.obj, st.req.Kind.GroupVersion()); err != nil {
		return fail(err)
	}
	// The API server defaults the object after every mutation: a custom
	// resource with its CRD schema's defaults, a built-in object with
	// kube-apiserver 1.37's defaulting functions. A typed out is the
	// mutation's own object (Typed copies the mutated object itself and
	// converts only fresh results), so it is defaulted in place; an
	// unstructured one may share maps with the object it came from, and
	// builtin.Default returns a defaulted copy. Neither the request's
	// object nor an earlier step's result changes.
	out = tc.Default(out)
	if _, ok := out.(*unstructured.Unstructured); ok {
		if out, err = builtin.Default(out); err != nil {
			return fail(err)
		}
	} else {
		builtin.Scheme().Default(out)
	}
	et.Value = valueUnchanged
	if !semanticEqual(vo.obj, out) {
		et.Value = valueChanged
	}
	return out, et, vars, nil
}

// patchWith applies the value of a mutation expression to vo's object.
func patchWith(tc *mutation.TypeConverter, pt admissionregistrationv1.PatchType, r celenv.Result, vo *versionedObject) (runtime.Object, error) {
	if pt == admissionregistrationv1.PatchTypeJSONPatch {
		p, err := mutation.BuildJSONPatch(r.Value)
		if err != nil {
			return nil, err
		}
		return mutation.ApplyJSONPatch(p, vo.obj, vo.kind)
	}
	ov, ok := r.Value.(*patchtypes.ObjectVal)
	if !ok {
		return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", r.Value.Type())
	}
	u, err := mutation.ApplyReusing(tc, vo.obj, vo.prior, ov)
	if err != nil {
		return nil, err
	}
	if _, ok := vo.obj.(*unstructured.Unstructured); !ok {
		// A typed object's result is converted, not kept: only the next
		// apply configuration reads it.
		vo.prior = u.Object
	}
	return u, nil
}
