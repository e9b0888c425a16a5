// The mutating phase: MutatingAdmissionPolicies run before the validating
// ones, as the API server's MutatingAdmissionPolicy plugin does
// (k8s.io/apiserver pkg/admission/plugin/policy/mutating), with at most one
// reinvocation pass.

package policy

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
)

// mutationPhase is the state of the mutating phase of one request, across
// its passes.
type mutationPhase struct {
	e *Evaluator
	// object is the request object as the passes left it.
	object runtime.Object
	// previouslyInvoked are the IfNeeded invocations that ran since the
	// last flush; reinvoke those allowed to run on the reinvocation pass.
	previouslyInvoked, reinvoke map[invocationKey]bool
	shouldReinvoke              bool
	trace                       []PolicyTrace
	// prior is the last apply configuration's result, which the next
	// pass's first one reuses (see versionedObject.prior).
	prior map[string]any
}

// invocationKey identifies a (policy, binding, param) across passes.
type invocationKey struct {
	policy, binding string
	param           k8stypes.NamespacedName
}

// invocation is one (policy, binding, param) a pass evaluates.
type invocation struct {
	cm      *compiledMutating
	binding *mutatingBinding
	res     matching.Result
	param   runtime.Object
}

// policyError is an error of one policy; reason is Invalid for errors of
// the mutations and match conditions, empty (Forbidden) for configuration
// errors.
type policyError struct {
	cm      *compiledMutating
	binding string
	err     error
	reason  metav1.StatusReason
}

func (pe policyError) Error() string {
	if pe.binding != "" {
		return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", pe.cm.policy.Name, pe.binding, pe.err.Error())
	}
	return fmt.Sprintf("policy %q denied request: %s", pe.cm.policy.Name, pe.err.Error())
}

// flush makes every previously invoked IfNeeded invocation eligible for
// the reinvocation pass.
func (ph *mutationPhase) flush() {
	for k := range ph.previouslyInvoked {
		ph.reinvoke[k] = true
	}
	clear(ph.previouslyInvoked)
}

// mutates reports whether the mutating plugin handles the request: it
// admits CREATE, UPDATE and CONNECT only.
func mutates(op admissionv1.Operation) bool {
	return op == admissionv1.Create || op == admissionv1.Update || op == admissionv1.Connect
}

// runMutations runs the mutating policies on req and returns the request
// the validating policies see. d receives the mutation trace and, when a
// mutating policy denies or aborts the request, the status; done is then
// true. The error is the context's.
func (e *Evaluator) runMutations(ctx context.Context, req *Request, d *Decision) (out *Request, done bool, err error) {
	if len(e.mutating) == 0 || !mutates(req.Operation) || req.Object == nil {
		return req, false, nil
	}
	ph := &mutationPhase{e: e, object: req.Object, previouslyInvoked: map[invocationKey]bool{}, reinvoke: map[invocationKey]bool{}}
	cur := req
	for pass := range 2 {
		if pass == 1 && !ph.shouldReinvoke {
			break
		}
		obj, status, err := ph.pass(ctx, cur, pass == 1)
		d.Mutations = ph.trace
		if err != nil {
			return nil, false, err
		}
		if status != nil {
			d.Allowed, d.Status = false, status
			return nil, true, nil
		}
		if obj != nil {
			next := *cur
			next.Object = obj
			cur = &next
		}
	}
	if cur == req || semanticEqual(req.Object, cur.Object) {
		return req, false, nil
	}
	d.Object = cur.Object
	patch, err := jsonPatchBetween(req.Object, cur.Object)
	if err != nil {
		d.Allowed, d.Status = false, statusFor(fmt.Errorf("failed to create JSON patch: %w", err))
		return nil, true, nil
	}
	d.Patch = patch
	return cur, false, nil
}

// pass runs one pass of the mutating plugin over req. It returns the new
// request object when the pass changed it, or the status that denies or
// aborts the request.
func (ph *mutationPhase) pass(ctx context.Context, req *Request, reinvocation bool) (runtime.Object, *metav1.Status, error) {
	st := newRequestState(ph.e, req)
	st.tracked = true
	defer st.release()
	vs := &versionedSet{st: st, prior: ph.prior}
	invs, errs, err := ph.invocations(ctx, st, vs)
	if err != nil {
		return nil, nil, err
	}
	var written runtime.Object
	for _, inv := range invs {
		st.exprHint += inv.cm.traced()
	}
	st.exprHint = min(st.exprHint, maxExprHint)
	if len(invs) > 0 {
		if err := st.loadNamespace(ctx); err != nil {
			ph.trace = append(ph.trace, PolicyTrace{Policy: invs[0].cm.policy.Name, Outcome: Errored, Err: ph.e.namespaceLookupError(err)})
			return nil, statusFor(err), nil
		}
		delegated, obj, status, err := ph.dispatch(ctx, st, vs, invs, reinvocation)
		if err != nil || status != nil {
			return nil, status, err
		}
		errs = append(errs, delegated...)
		written = obj
	}
	var kept []policyError
	for _, pe := range errs {
		if pe.cm.base.failurePolicy != admissionregistrationv1.Ignore {
			kept = append(kept, pe)
		}
	}
	if len(kept) > 0 {
		return nil, st.mutationDenied(kept), nil
	}
	return written, nil, nil
}

// invocations matches the policies, bindings and params against req, as
// the generic policy dispatcher does before handing the invocations to the
// mutating plugin. The errors are the configuration errors met.
func (ph *mutationPhase) invocations(ctx context.Context, st *requestState, vs *versionedSet) ([]invocation, []policyError, error) {
	sc := ph.e.mutatingScratches.Get().(*matching.Scratch)
	defer func() {
		sc.Release()
		ph.e.mutatingScratches.Put(sc)
	}()
	sc.Reset(&st.attrs, matching.Options{Namespaces: ph.e.opts.Namespaces, Resources: ph.e.mapper})
	var invs []invocation
	var errs []policyError
	configErr := func(cm *compiledMutating, b string, format string, err error) {
		pe := policyError{cm: cm, binding: b, err: fmt.Errorf(format, err)}
		errs = append(errs, pe)
		ph.trace = append(ph.trace, PolicyTrace{Policy: cm.policy.Name, Binding: b, Outcome: Errored, Err: pe.err})
	}
	for _, cm := range ph.e.mutating {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		res, err := cm.matcher.Match(ctx, sc)
		switch {
		case err != nil:
			configErr(cm, "", "failed to configure policy: %w", err)
			continue
		case !res.Matched:
			continue
		case cm.base.configErr != nil:
			configErr(cm, "", "failed to configure policy: %w", cm.base.configErr)
			continue
		}
		for _, b := range cm.bindings {
			bres, err := b.matcher.Match(ctx, sc)
			if err != nil {
				configErr(cm, b.binding.Name, "failed to configure binding: %w", err)
				continue
			}
			if !bres.Matched {
				continue
			}
			if _, err := vs.get(res.Kind); err != nil {
				configErr(cm, "", "failed to configure policy: %w", err)
				continue
			}
			ps, err := params.Resolve(ctx, ph.e.opts.Params, params.Request{
				ParamKind: cm.base.paramKind, ParamRef: b.base.Spec.ParamRef,
				Namespaced: cm.base.paramsScoped, RequestNamespace: st.req.Namespace,
			})
			if err != nil {
				if ctx.Err() != nil {
					return nil, nil, ctx.Err()
				}
				configErr(cm, b.binding.Name, "failed to configure binding: %w", err)
				continue
			}
			for _, p := range ps {
				invs = append(invs, invocation{cm: cm, binding: b, res: res, param: p})
			}
		}
	}
	return invs, errs, nil
}

// mutationDenied builds the status of a request that mutating policies
// deny, as the generic dispatcher does: admission.NewForbidden, whose
// message becomes the first error's text, whose reason becomes the first
// error's reason when it has one, and one cause per error. The code stays
// 403.
func (st *requestState) mutationDenied(errs []policyError) *metav1.Status {
	status := apierrors.NewForbidden(st.req.Resource.GroupResource(), st.deniedName(), errors.New("admission request denied by policy")).ErrStatus
	status.Message = errs[0].Error()
	if errs[0].reason != "" {
		status.Reason = errs[0].reason
	}
	for _, pe := range errs {
		status.Details.Causes = append(status.Details.Causes, metav1.StatusCause{Message: pe.Error()})
	}
	return &status
}
