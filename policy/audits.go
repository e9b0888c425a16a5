// Audit annotations of one evaluation.

package policy

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/vapkit/vapkit/celenv"
)

// auditResult is the outcome of one audit annotation: published when its
// value is a non-empty string, a denial when err is set.
type auditResult struct {
	key     string
	value   string
	publish bool
	err     string // non-empty: deny regardless of validationActions
}

// runAudits evaluates the policy's audit annotations with in, on a fresh
// budget, and traces them. The error fails the whole evaluation.
func (st *requestState) runAudits(ctx context.Context, cp *compiledPolicy, in *celenv.Input, tr *PolicyTrace) ([]auditResult, error) {
	results, vars, err := st.evalBatch(ctx, cp.scope, in, runtimeBudget, cp.auditExprs)
	if err != nil {
		return nil, err
	}
	out := scratch(&st.audits, len(cp.audits))
	for i, a := range cp.audits {
		r := results[i]
		tr.addCost(&r)
		tr.Expressions = append(tr.Expressions, cp.judgeAudit(a, r, &out[i]))
	}
	cp.traceVariables(tr, vars)
	return out, nil
}

// judgeAudit sets ar to the outcome of audit annotation a, whose result is
// r, and returns a's trace entry.
func (cp *compiledPolicy) judgeAudit(a compiledAudit, r celenv.Result, ar *auditResult) ExprTrace {
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
	return et
}
