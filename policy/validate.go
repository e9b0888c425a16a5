// One (policy, binding, param) evaluation: match conditions, validations
// and audit annotations, under the policy's cost budgets.

package policy

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

// validateResult is what one evaluation contributes to the decision:
// the validations' verdicts and the audit annotations.
type validateResult struct {
	decisions []decision
	audits    []auditResult
}

// errorDecision is the result of an evaluation that failed as a whole with
// msg: a denial unless the failurePolicy is Ignore.
func (cp *compiledPolicy) errorDecision(msg string) validateResult {
	return validateResult{decisions: []decision{{deny: cp.failurePolicy != admissionregistrationv1.Ignore, errored: true, message: msg}}}
}

// validate evaluates one (policy, binding, param), as the API server's
// validator does: match conditions, then validations with their messages,
// then audit annotations.
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
			return cp.failed(tr, err)
		}
		if !matched {
			tr.Outcome = NotMatched
			return validateResult{}
		}
	}
	in.Request = st.lazyRequest(matched, vo.kind)
	if st.ns != nil {
		in.Namespace = st.lazyNamespace()
	}
	if vo.err != nil {
		return cp.failed(tr, vo.err)
	}

	// Validations, with the authorizer; then message expressions, on what
	// is left and without the authorizer.
	valIn := *in
	valIn.Authorizer, valIn.RequestResource = authzVal, rrVal
	out, err := st.runValidations(ctx, cp, &valIn, in, tr)
	if err != nil {
		return cp.failed(tr, err)
	}

	// Audit annotations: a fresh budget, no authorizer, the whole namespace.
	if len(cp.audits) > 0 {
		audIn := *in
		if st.ns != nil {
			audIn.Namespace = st.lazyNamespaceWhole()
		}
		out.audits, err = st.runAudits(ctx, cp, &audIn, tr)
		if err != nil {
			return cp.failed(tr, err)
		}
	}
	return out
}

// failed records in tr an error that failed the whole evaluation and
// returns its decision.
func (cp *compiledPolicy) failed(tr *PolicyTrace, err error) validateResult {
	tr.Outcome, tr.Err = Errored, err
	return cp.errorDecision(err.Error())
}

// nextExpr appends an empty expression entry to t and returns it, to be
// filled in place: an entry is too large to copy for free.
func (t *PolicyTrace) nextExpr() *ExprTrace {
	t.Expressions = append(t.Expressions, ExprTrace{})
	return &t.Expressions[len(t.Expressions)-1]
}

// addCost adds what r charged to the entry's total.
func (t *PolicyTrace) addCost(r *celenv.Result) {
	t.Cost += r.Cost
	t.CostEstimated = t.CostEstimated || r.Estimated
}

// session is what the request's batches share. Batches skip cost tracking
// where the estimates allow, celenv measuring instead when they would
// exhaust a budget; Options.MeasureCost, and the mutating phase, track
// from the start.
func (st *requestState) session() *celenv.Session {
	st.sess.Measure = st.e.opts.MeasureCost || st.tracked
	return &st.sess
}

// measuringSession is session for batches that measure every cost.
func (st *requestState) measuringSession() *celenv.Session {
	st.sess.Measure = true
	return &st.sess
}

// evalBatch evaluates progs in one batch, returning their results and the
// variables they read. Both are valid until the session's next batch.
func (st *requestState) evalBatch(ctx context.Context, scope *celenv.Scope, in *celenv.Input, budget int64, progs []*celenv.Program) ([]celenv.Result, []celenv.Variable, error) {
	batch := scope.NewBatch(ctx, st.session(), in, budget)
	for _, p := range progs {
		if _, err := batch.Eval(p); err != nil {
			return nil, nil, err
		}
	}
	return batch.Results(), batch.Variables(), nil
}

// traceVariables appends to tr an entry for each of vars, the variables
// one batch read, that no earlier batch of the evaluation traced: Passed
// with its value, Failed for false, Errored with its error. The
// expression that read a variable was charged its cost, so the entry's
// Cost is 0.
func (cp *compiledPolicy) traceVariables(tr *PolicyTrace, vars []celenv.Variable) {
next:
	for _, v := range vars {
		path := cp.varPaths[v.Name]
		for _, et := range tr.Expressions {
			if et.Path == path {
				continue next
			}
		}
		if et, ok := variableTrace(path, v.Value); ok {
			tr.Expressions = append(tr.Expressions, et)
		}
	}
}

// variableTrace is the trace entry of a variable at path whose value is
// val; false when val is nil (never evaluated).
func variableTrace(path *field.Path, val ref.Val) (ExprTrace, bool) {
	et := ExprTrace{Path: path, Outcome: Passed}
	switch val := val.(type) {
	case nil:
		return et, false
	case *types.Err:
		et.Outcome, et.Err = Errored, val.Error()
	case types.Bool:
		et.Value = strconv.FormatBool(bool(val))
		if !val {
			et.Outcome = Failed
		}
	case types.String:
		et.Value = string(val)
	default:
		// The type, not the value: rendering a list or map for every
		// request would cost more than the trace is worth.
		et.Value = val.Type().TypeName()
	}
	return et, true
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
