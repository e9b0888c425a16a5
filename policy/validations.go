// Validations and their message expressions of one evaluation.

package policy

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/celenv"
)

// runValidations evaluates the validations with valIn and their message
// expressions with msgIn, and traces them. fold consumes the result before
// the next evaluation reuses its slices. The error fails the whole
// evaluation.
func (st *requestState) runValidations(ctx context.Context, cp *compiledPolicy, valIn, msgIn *celenv.Input, tr *PolicyTrace) (validateResult, error) {
	results, messages, vars, msgErr, err := st.evalValidations(ctx, cp, valIn, msgIn)
	if err != nil {
		return validateResult{}, err
	}
	for i := range results {
		tr.addCost(&results[i])
		if messages[i] != nil {
			tr.addCost(messages[i])
		}
	}
	out := validateResult{decisions: scratch(&st.decisions, len(cp.validations))}
	tr.Outcome = Passed
	// Validations are read in place: each is too large to copy for free.
	for i := range cp.validations {
		d := &out.decisions[i]
		cp.judgeValidation(&cp.validations[i], &results[i], messages[i], msgErr, d, tr.nextExpr())
		if d.errored {
			tr.Outcome = Errored
		} else if d.deny && tr.Outcome != Errored {
			tr.Outcome = Failed
		}
	}
	// Message expressions, after the validations as they were evaluated.
	for i := range cp.validations {
		if m := messages[i]; m != nil {
			messageTrace(&cp.validations[i], m, tr.nextExpr())
		}
	}
	cp.traceVariables(tr, vars[0])
	cp.traceVariables(tr, vars[1])
	return out, nil
}

// judgeValidation sets d to the verdict of validation v, given its result
// r, its message msg (nil without one) and msgErr, the error that stopped
// the message expressions, and fills et, v's empty trace entry.
func (cp *compiledPolicy) judgeValidation(v *compiledValidation, r *celenv.Result, msg *celenv.Result, msgErr error, d *decision, et *ExprTrace) {
	et.Path, et.Cost, et.CostEstimated = v.path, r.Cost, r.Estimated
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
		d.message = failureMessage(v, msg)
		et.Outcome, et.Value = Failed, d.message
	default:
		et.Outcome, et.Value = Passed, "true"
	}
}

// messageTrace fills et, the empty trace entry of v's message expression,
// whose result is m.
func messageTrace(v *compiledValidation, m *celenv.Result, et *ExprTrace) {
	et.Path, et.Cost, et.CostEstimated, et.Outcome = v.msgPath, m.Cost, m.Estimated, Passed
	switch {
	case m.Value == nil && m.Err == nil:
		// Not evaluated: the validation passed, so the message is
		// never shown (celenv.Batch.Charge).
		et.Outcome = Skipped
	case m.Err != nil:
		et.Outcome, et.Err = Errored, m.Err.Error()
	default:
		et.Value = valueString(m.Value)
	}
}

// evalValidations evaluates the validations with valIn, then the message
// expressions with msgIn on what is left of the budget. msgErr is the error
// that stopped the message expressions; vars are the variables the
// validations, then the message expressions, read. The results are valid
// until the session's next batch.
func (st *requestState) evalValidations(ctx context.Context, cp *compiledPolicy, valIn, msgIn *celenv.Input) (results []celenv.Result, messages []*celenv.Result, vars [2][]celenv.Variable, msgErr, err error) {
	batch := cp.scope.NewBatch(ctx, st.session(), valIn, runtimeBudget)
	for i := range cp.validations {
		if _, err := batch.Eval(cp.validations[i].expr); err != nil {
			return nil, nil, vars, nil, err
		}
	}
	n := len(cp.validations)
	messages = scratch(&st.msgPtrs, n)
	// at[i] is 1 + the position of validation i's message among msgBatch's
	// Results, 0 for none.
	at := scratch(&st.msgAt, n)
	var msgBatch *celenv.Batch
	for i := range cp.validations {
		v := &cp.validations[i]
		if v.message == nil {
			continue
		}
		if msgBatch == nil {
			msgBatch = batch.Next(msgIn)
		}
		if r := batch.Results()[i]; r.Err == nil && r.Value == types.True {
			// The message of a passing validation is never shown; only
			// its cost counts, and its bound covers that.
			_, err = msgBatch.Charge(v.message)
		} else {
			_, err = msgBatch.Eval(v.message)
		}
		if err != nil {
			msgErr = err
			break
		}
		at[i] = len(msgBatch.Results())
	}
	for i, k := range at {
		if k > 0 {
			messages[i] = &msgBatch.Results()[k-1]
		}
	}
	// Read last: measuring the message expressions' costs may have
	// measured the validations' too.
	vars[0] = batch.Variables()
	if msgBatch != nil {
		vars[1] = msgBatch.Variables()
	}
	return batch.Results(), messages, vars, msgErr, nil
}

// maxMessageLength is the longest messageExpression result, in bytes, that
// the API server uses as a denial message.
const maxMessageLength = 5 * 1024

// failureMessage chooses the message of a failed validation:
// messageExpression, then message, then the expression itself.
func failureMessage(v *compiledValidation, msg *celenv.Result) string {
	var m string
	if msg != nil && msg.Err == nil && msg.Value != nil {
		if s, ok := msg.Value.(types.String); ok {
			m = strings.TrimSpace(string(s))
			if len(m) > maxMessageLength || strings.Contains(m, "\n") {
				m = ""
			}
		}
	}
	if m == "" && v.spec.Message != "" {
		m = strings.TrimSpace(v.spec.Message)
	}
	if m == "" {
		m = "failed expression: " + strings.TrimSpace(v.spec.Expression)
	}
	return m
}
