// Validations and their message expressions of one evaluation.

package policy

import (
	"context"
	"errors"
	"strings"

	"github.com/google/cel-go/common/types"

	"github.com/vapkit/vapkit/celenv"
)

// evalValidations evaluates the validations with valIn, then the message
// expressions with msgIn on what is left of the budget. msgErr is the error
// that stopped the message expressions.
func (st *requestState) evalValidations(ctx context.Context, cp *compiledPolicy, valIn, msgIn *celenv.Input, untracked bool) (results []celenv.Result, messages []*celenv.Result, msgErr, err error) {
	n := len(cp.validations)
	buf := st.scratchResults(2 * n)
	results, msgResults := buf[:n:n], buf[n:]
	batch := st.newBatch(ctx, cp.scope, valIn, celenv.RuntimeBudget, untracked)
	defer batch.Release()
	for i, v := range cp.validations {
		r, err := batch.Eval(v.expr)
		if err != nil {
			return nil, nil, nil, err
		}
		results[i] = r
	}
	messages = scratch(&st.msgPtrs, n)
	var msgBatch *celenv.Batch
	for i, v := range cp.validations {
		if v.message == nil {
			continue
		}
		if msgBatch == nil {
			msgBatch = batch.Next(msgIn)
			defer msgBatch.Release()
		}
		if results[i].Err == nil && results[i].Value == types.True {
			// The message of a passing validation is never shown; only
			// its cost counts, and its bound covers that.
			r, skipped, err := msgBatch.Skip(v.message)
			if errors.Is(err, celenv.ErrNeedsTracking) {
				return nil, nil, nil, err
			}
			if skipped {
				msgResults[i] = r
				messages[i] = &msgResults[i]
				continue
			}
		}
		r, err := msgBatch.Eval(v.message)
		if errors.Is(err, celenv.ErrNeedsTracking) {
			return nil, nil, nil, err
		}
		if err != nil {
			msgErr = err
			break
		}
		msgResults[i] = r
		messages[i] = &msgResults[i]
	}
	return results, messages, msgErr, nil
}

// failureMessage chooses the message of a failed validation:
// messageExpression, then message, then the expression itself.
func failureMessage(v compiledValidation, msg *celenv.Result) string {
	var m string
	if msg != nil && msg.Err == nil && msg.Value != nil {
		if s, ok := msg.Value.(types.String); ok {
			m = strings.TrimSpace(string(s))
			if len(m) > celenv.MaxMessageExpressionLength || strings.Contains(m, "\n") {
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
