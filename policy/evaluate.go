// Stage 1 of a request: Evaluate's entry point and the dispatch over the
// candidate policies, their bindings and params. The stages follow in
// state.go, inputs.go, requestvalue.go, validate.go (with matchconditions.go,
// validations.go and audits.go), fold.go and status.go.

package policy

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/audit"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Evaluate admits or denies req as the API server's ValidatingAdmissionPolicy
// plugin does, after the MutatingAdmissionPolicy plugin when
// Options.MutatingPolicies are set: the mutating policies run first (with
// their reinvocation pass), a denial by them ends the request, and the
// validating policies see the mutated object, which the Decision carries
// with the JSON patch to it.
//
// The error is non-nil only when no decision can be produced: an invalid
// request or a done ctx. Everything the policies say, including their errors
// under failurePolicy, is in the Decision. A failed namespace lookup denies
// the request with the lookup's own status (404 for a missing namespace),
// whatever the failurePolicy, as in the API server.
//
// Cancellation: when ctx is done before the decision is complete, Evaluate
// returns a nil Decision and ctx.Err() (errors.Is works with
// context.Canceled and context.DeadlineExceeded). A running expression stops
// at its next interrupt check (every celenv.CheckFrequency comprehension
// iterations) with "operation interrupted"; no further binding or policy is
// started, and plug-ins receive ctx. A partial decision is never returned.
//
// Policies are evaluated in name order, then bindings in name order, then
// params in namespace/name order. The API server's order is unspecified;
// where several policies deny, vapkit reports the first in this order.
//
// The Trace has an entry for every policy: one per evaluated (binding,
// param), NotMatched for policies and bindings that do not match the
// request, and, after those, Skipped entries with a reason in Err for what
// is never evaluated (policies without bindings, bindings whose policy is
// missing). Errors ignored under failurePolicy Ignore are in Err or in the
// expression entries.
func (e *Evaluator) Evaluate(ctx context.Context, req *Request) (*Decision, error) {
	if req == nil {
		return nil, errors.New("request is nil")
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if matching.Exempt(req.Resource.GroupResource()) {
		return &Decision{Allowed: true, Trace: e.exemptTrace()}, nil
	}
	var d *Decision // nil: dispatch allocates it with the trace
	if len(e.mutating) > 0 {
		d = &Decision{Allowed: true}
		var done bool
		var err error
		if req, done, err = e.runMutations(ctx, req, d); err != nil {
			return nil, err
		} else if done {
			return d, nil
		}
	}
	st := newRequestState(e, req)
	defer st.release()
	st.out = d
	err := st.dispatch(ctx)
	if d = st.out; d == nil {
		d = &Decision{Allowed: true}
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		d.Allowed = false
		d.Status = statusFor(err)
	}
	if d.Status == nil && len(st.denied) > 0 {
		d.Allowed = false
		d.Status = st.forbidden(st.denied[0])
	}
	d.Warnings = st.warnings.out
	if len(st.failures) > 0 {
		if v, ok := audit.EncodeValidationFailures(recordedFailures(e.env.Version(), st.failures)); ok {
			st.annotate(audit.ValidationFailureKey, v)
		}
	}
	if len(st.annotations) > 0 {
		d.AuditAnnotations = st.annotations
	}
	d.Trace = st.trace
	return d, nil
}

// Trace explanations for entries that were never evaluated.
var (
	errNoBindings     = errors.New("policy has no bindings")
	errPolicyNotFound = errors.New("binding's policy not found")
	errDropped        = errors.New("policy is not enforced: its paramKind apiVersion cannot be parsed")
	errExempt         = errors.New("resource is exempt from admission policies")
)

// exemptTrace lists every policy and binding as skipped, for requests on
// the admission registration resources themselves.
func (e *Evaluator) exemptTrace() []PolicyTrace {
	tr := make([]PolicyTrace, 0, len(e.policies)+len(e.skipped))
	for _, cp := range e.policies {
		tr = append(tr, PolicyTrace{Policy: cp.policy.Name, Outcome: Skipped, Err: errExempt})
	}
	return append(tr, e.skipped...)
}

// dispatch evaluates the candidate policies in name order. The trace gets an
// entry for each candidate policy the request does not match (and, with
// Options.TraceUnmatched, for every other policy too), each
// evaluated (policy, binding, param) and, last, the entries of
// Evaluator.skipped, so that nothing is left out silently.
func (st *requestState) dispatch(ctx context.Context) error {
	sc := st.scratch()
	defer sc.Release()
	sc.Reset(&st.attrs, matching.Options{Namespaces: st.e.opts.Namespaces, Resources: st.e.mapper})
	cands := st.e.candidatesFor(&st.attrs)
	if !st.e.opts.TraceUnmatched {
		// With TraceUnmatched every binding a policy's rules select is
		// traced, so policies are visited as before.
		st.cands = st.e.labels.Filter(ctx, sc, cands, st.cands[:0])
		cands = st.cands
	}
	visit := st.startTrace(cands)
	for _, id := range visit {
		if err := ctx.Err(); err != nil {
			return err
		}
		cp := st.e.policies[id]
		// Candidate IDs are sorted indexes into policies; with
		// TraceUnmatched every policy is visited and the ones the index
		// rules out are recorded as not matched.
		if len(cands) == 0 || cands[0] != id {
			st.trace = append(st.trace, PolicyTrace{Policy: cp.policy.Name, Outcome: NotMatched})
			continue
		}
		cands = cands[1:]
		if err := st.dispatchPolicy(ctx, cp, sc); err != nil {
			return err
		}
	}
	st.trace = append(st.trace, st.e.skipped...)
	return ctx.Err()
}

// startTrace sizes the trace and the first expression allocation for the
// candidate policies cands, and returns the policies dispatch visits. When
// the trace has one entry and the Decision is not allocated yet, the three
// share one allocation (newDecisionBlock).
func (st *requestState) startTrace(cands []int) []int {
	for _, id := range cands {
		cp := st.e.policies[id]
		st.exprHint += len(cp.matchConditions) + cp.traced
	}
	st.exprHint = min(st.exprHint, maxExprHint)
	visit, n := cands, len(cands)+len(st.e.skipped)
	if st.e.opts.TraceUnmatched {
		visit, n = st.e.allIDs, len(st.e.policies)+len(st.e.skipped)
	}
	if n == 1 && st.out == nil {
		st.out, st.trace, st.exprSlab = newDecisionBlock(st.exprHint)
		if st.exprSlab != nil {
			st.exprHint = 0
		}
		return visit
	}
	st.trace = make([]PolicyTrace, 0, n)
	return visit
}

// dispatchPolicy evaluates a candidate policy for each of its bindings that
// matches, then publishes its audit annotations. The error aborts the
// request.
func (st *requestState) dispatchPolicy(ctx context.Context, cp *compiledPolicy, sc *matching.Scratch) error {
	name := cp.policy.Name
	res, err := cp.matcher.Match(ctx, sc)
	if err != nil {
		st.configError(cp, nil, err)
		return nil
	}
	if !res.Matched {
		st.trace = append(st.trace, PolicyTrace{Policy: name, Outcome: NotMatched})
		return nil
	}
	if cp.configErr != nil {
		st.configError(cp, nil, cp.configErr)
		return nil
	}
	collector := audit.NewCollector(name)
	for i := range cp.bindings {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := st.dispatchBinding(ctx, cp, i, res, sc, collector); err != nil {
			return err
		}
	}
	for _, a := range collector.Annotations() {
		st.annotate(a.Key, a.Value)
	}
	return nil
}

// dispatchBinding evaluates cp for its binding i, once per param, if the
// binding matches the request; res is how the policy matched. The error
// aborts the request.
func (st *requestState) dispatchBinding(ctx context.Context, cp *compiledPolicy, i int,
	res matching.Result, sc *matching.Scratch, collector *audit.Collector) error {
	name, b := cp.policy.Name, cp.bindings[i]
	bres, err := cp.bindingMatchers[i].Match(ctx, sc)
	if err != nil {
		st.configError(cp, b, err)
		return nil
	}
	if !bres.Matched {
		st.trace = append(st.trace, PolicyTrace{Policy: name, Binding: b.Name, Outcome: NotMatched, Actions: b.Spec.ValidationActions})
		return nil
	}
	ps, err := noParams, error(nil)
	if cp.paramKind != nil && b.Spec.ParamRef != nil {
		// Without either, params.Resolve returns noParams' content,
		// allocating it.
		ps, err = params.Resolve(ctx, st.e.opts.Params, params.Request{
			ParamKind:        cp.paramKind,
			ParamRef:         b.Spec.ParamRef,
			Namespaced:       cp.paramsScoped,
			RequestNamespace: st.req.Namespace,
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		st.configError(cp, b, err)
		return nil
	}
	var vo *versionedObjects
	if len(ps) > 0 {
		vo, err = st.versionedFor(res.Kind)
		if err != nil {
			st.configError(cp, b, fmt.Errorf("failed to convert object version: %w", err))
			return nil
		}
	}
	if err := st.loadNamespace(ctx); err != nil {
		// The lookup failure aborts the whole request.
		st.trace = append(st.trace, PolicyTrace{Policy: name, Binding: b.Name, Outcome: Errored, Actions: b.Spec.ValidationActions,
			Err: st.e.namespaceLookupError(err)})
		return err
	}
	if len(ps) == 0 {
		st.trace = append(st.trace, PolicyTrace{Policy: name, Binding: b.Name, Outcome: Skipped, Actions: b.Spec.ValidationActions,
			Err: errors.New("no params found; parameterNotFoundAction allows the request")})
	}
	for _, p := range ps {
		pv, pname := st.paramValue(cp, p)
		tr := PolicyTrace{Policy: name, Binding: b.Name, Param: pname, Actions: b.Spec.ValidationActions}
		r := st.validate(ctx, cp, res.Resource, vo, pv, &tr)
		st.fold(cp, b, r, collector, &tr)
		st.trace = append(st.trace, tr)
	}
	return nil
}

// noParams is the params of a binding without paramKind or paramRef: one
// evaluation, without a param. It is read only.
var noParams = []runtime.Object{nil}

// candidateKey is what the index's candidates for a request depend on.
type candidateKey struct {
	operation   string
	resource    schema.GroupVersionResource
	subresource string
}

// candidateMemo is the index's answer for key.
type candidateMemo struct {
	key candidateKey
	ids []int
}

// maxCandidateMemo bounds Evaluator.candidates.
const maxCandidateMemo = 1024

// candidatesFor returns the IDs of the policies that may match a, sorted;
// the slice is shared and must not be modified.
func (e *Evaluator) candidatesFor(a *matching.Attributes) []int {
	if _, ours := e.mapper.(*manifest.ResourceMapper); !ours {
		// A caller's own mapper may change its answers.
		return e.index.CandidatesFor(a, e.mapper)
	}
	k := candidateKey{operation: a.Operation, resource: a.Resource, subresource: a.SubResource}
	if m := e.lastCandidates.Load(); m != nil && m.key == k {
		return m.ids
	}
	if v, ok := e.candidates.Load(k); ok {
		m := v.(*candidateMemo)
		e.lastCandidates.Store(m)
		return m.ids
	}
	m := &candidateMemo{key: k, ids: e.index.CandidatesFor(a, e.mapper)}
	if e.candidateCount.Load() < maxCandidateMemo {
		if _, loaded := e.candidates.LoadOrStore(k, m); !loaded {
			e.candidateCount.Add(1)
			e.lastCandidates.Store(m)
		}
	}
	return m.ids
}
