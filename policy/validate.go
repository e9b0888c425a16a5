// One (policy, binding, param) evaluation: match conditions, validations
// and audit annotations, under the policy's cost budgets.

package policy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/celenv"
)

// decision is the verdict of one validation, or of a whole evaluation when
// it failed as a whole.
type decision struct {
	deny    bool
	errored bool
	message string
	reason  metav1.StatusReason
}

type validateResult struct {
	decisions []decision
	audits    []auditResult
}

func (cp *compiledPolicy) errorDecision(msg string) validateResult {
	return validateResult{decisions: []decision{{deny: cp.failurePolicy != admissionregistrationv1.Ignore, errored: true, message: msg}}}
}

// validate evaluates one (policy, binding, param), as the API server's
// validator does.
func (st *requestState) validate(ctx context.Context, cp *compiledPolicy, matched schema.GroupVersionResource, vo *versionedObjects, param any, tr *PolicyTrace) validateResult {
	tr.Expressions = st.exprTraces(len(cp.matchConditions) + cp.traced)
	in := &celenv.Input{Params: param}
	if vo.object != nil {
		in.Object = vo.object
	}
	if vo.oldObject != nil {
		in.OldObject = vo.oldObject
	}
	var authzVal, rrVal ref.Val
	if cp.readsAuthorizer {
		authzVal, rrVal = st.authorizerValues(ctx)
	}

	if len(cp.matchConditions) > 0 {
		mcIn := *in
		mcIn.Request = st.lazyRequest(st.req.Resource, vo.kind)
		mcIn.Authorizer, mcIn.RequestResource = authzVal, rrVal
		matched, err := st.matchConditions(ctx, cp, &mcIn, vo, tr)
		if err != nil {
			tr.Outcome = Errored
			tr.Err = err
			return cp.errorDecision(err.Error())
		}
		if !matched {
			tr.Outcome = NotMatched
			return validateResult{}
		}
	}
	in.Request = st.lazyRequest(matched, vo.kind)
	if st.ns != nil {
		in.Namespace = celenv.Lazy(st.namespaceTrimmed)
	}
	if vo.err != nil {
		tr.Outcome, tr.Err = Errored, vo.err
		return cp.errorDecision(vo.err.Error())
	}

	// Validations, with the authorizer; then message expressions, on what
	// is left and without the authorizer.
	valIn := *in
	valIn.Authorizer, valIn.RequestResource = authzVal, rrVal
	var results []celenv.Result
	var messages []*celenv.Result
	var msgErr, err error
	for _, untracked := range st.costPasses() {
		results, messages, msgErr, err = st.evalValidations(ctx, cp, &valIn, in, untracked)
		if !errors.Is(err, celenv.ErrNeedsTracking) {
			break
		}
	}
	if err != nil {
		tr.Outcome, tr.Err = Errored, err
		return cp.errorDecision(err.Error())
	}
	for i := range results {
		tr.addCost(results[i])
		if messages[i] != nil {
			tr.addCost(*messages[i])
		}
	}

	// fold consumes out before the next evaluation reuses its slices.
	out := validateResult{decisions: scratch(&st.decisions, len(cp.validations))}
	tr.Outcome = Passed
	for i, v := range cp.validations {
		r := results[i]
		et := ExprTrace{Path: v.path, Cost: r.Cost, CostEstimated: r.Estimated}
		d := &out.decisions[i]
		switch {
		case r.Err != nil:
			d.deny, d.errored, d.message = cp.failurePolicy != admissionregistrationv1.Ignore, true, r.Err.Error()
			et.Outcome, et.Err = Errored, r.Err.Error()
		case msgErr != nil:
			d.deny, d.errored = cp.failurePolicy != admissionregistrationv1.Ignore, true
			d.message = fmt.Sprintf("failed messageExpression: %s", msgErr)
			et.Outcome, et.Err = Errored, d.message
		case r.Value != types.True:
			d.deny = true
			d.reason = metav1.StatusReasonInvalid
			if v.spec.Reason != nil {
				d.reason = *v.spec.Reason
			}
			d.message = failureMessage(v, messages[i])
			et.Outcome, et.Value = Failed, d.message
		default:
			et.Outcome, et.Value = Passed, "true"
		}
		if d.errored {
			tr.Outcome = Errored
		} else if d.deny && tr.Outcome != Errored {
			tr.Outcome = Failed
		}
		tr.Expressions = append(tr.Expressions, et)
	}
	// Message expressions, after the validations as they were evaluated.
	for i, v := range cp.validations {
		m := messages[i]
		if m == nil {
			continue
		}
		et := ExprTrace{Path: v.msgPath, Cost: m.Cost, CostEstimated: m.Estimated, Outcome: Passed}
		switch {
		case m.Value == nil && m.Err == nil:
			// Not evaluated: the validation passed, so the message is
			// never shown (celenv.Batch.Skip).
			et.Outcome = Skipped
		case m.Err != nil:
			et.Outcome, et.Err = Errored, m.Err.Error()
		default:
			et.Value = valueString(m.Value)
		}
		tr.Expressions = append(tr.Expressions, et)
	}

	// Audit annotations: a fresh budget, no authorizer, the whole namespace.
	if len(cp.audits) > 0 {
		audIn := *in
		if st.ns != nil {
			audIn.Namespace = celenv.Lazy(st.namespaceWhole)
		}
		var results []celenv.Result
		var err error
		for _, untracked := range st.costPasses() {
			results, err = st.evalBatch(ctx, cp.scope, &audIn, celenv.RuntimeBudget, untracked, cp.auditExprs)
			if !errors.Is(err, celenv.ErrNeedsTracking) {
				break
			}
		}
		if err != nil {
			tr.Outcome, tr.Err = Errored, err
			return cp.errorDecision(err.Error())
		}
		out.audits = scratch(&st.audits, len(cp.audits))
		for i, a := range cp.audits {
			r := results[i]
			tr.addCost(r)
			ar := &out.audits[i]
			ar.key = a.key
			et := ExprTrace{Path: a.path, Cost: r.Cost, CostEstimated: r.Estimated, Outcome: Passed}
			switch {
			case r.Err != nil:
				et.Outcome, et.Err = Errored, r.Err.Error()
				if cp.failurePolicy != admissionregistrationv1.Ignore {
					ar.err = r.Err.Error()
				}
			case r.Value.Type() == types.StringType:
				if s := strings.TrimSpace(string(r.Value.(types.String))); s != "" {
					ar.publish, ar.value = true, s
					et.Value = s
				}
			case r.Value.Type() == types.NullType:
				et.Value = "null"
			default:
				ar.err = fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. Return type must be either string or null.", a.expr.Expression(), r.Value.Type())
				et.Outcome, et.Err = Errored, ar.err
			}
			tr.Expressions = append(tr.Expressions, et)
		}
	}
	return out
}

// addCost adds what r charged to the entry's total.
func (t *PolicyTrace) addCost(r celenv.Result) {
	t.Cost += r.Cost
	t.CostEstimated = t.CostEstimated || r.Estimated
}

// Cost tracking passes: batches first skip cost tracking where the
// estimates allow; if the estimates would exhaust a budget
// (celenv.ErrNeedsTracking) the batch runs again tracked, so that every
// limit is decided on measured costs. Options.MeasureCost tracks from the
// start.
var (
	untrackedFirst = []bool{true, false}
	trackedOnly    = []bool{false}
)

func (st *requestState) costPasses() []bool {
	if st.e.opts.MeasureCost {
		return trackedOnly
	}
	return untrackedFirst
}

// newBatch starts a batch, untracked where the estimates allow if asked.
func (st *requestState) newBatch(ctx context.Context, scope *celenv.Scope, in *celenv.Input, budget int64, untracked bool) *celenv.Batch {
	b := scope.NewBatch(ctx, in, budget)
	if untracked {
		b.Untracked(&st.sizes)
	}
	return b
}

// evalBatch evaluates progs in one batch.
func (st *requestState) evalBatch(ctx context.Context, scope *celenv.Scope, in *celenv.Input, budget int64, untracked bool, progs []*celenv.Program) ([]celenv.Result, error) {
	results := st.scratchResults(len(progs))
	batch := st.newBatch(ctx, scope, in, budget, untracked)
	defer batch.Release()
	for i, p := range progs {
		r, err := batch.Eval(p)
		if err != nil {
			return nil, err
		}
		results[i] = r
	}
	return results, nil
}

func valueString(v ref.Val) string {
	switch t := v.(type) {
	case nil:
		return ""
	case types.Bool:
		return strconv.FormatBool(bool(t))
	case types.String:
		return string(t)
	}
	return fmt.Sprint(v.Value())
}
