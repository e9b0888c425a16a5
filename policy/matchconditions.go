// Match conditions of one evaluation.

package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/vapkit/vapkit/celenv"
)

// matchConditions evaluates the policy's match conditions: a false condition
// wins over errors; otherwise errors fail or skip per failurePolicy.
func (st *requestState) matchConditions(ctx context.Context, cp *compiledPolicy, in *celenv.Input, vo *versionedObjects, tr *PolicyTrace) (bool, error) {
	fail := cp.failurePolicy == admissionregistrationv1.Fail
	ignore := cp.failurePolicy == admissionregistrationv1.Ignore
	if vo.err != nil {
		if fail {
			return false, vo.err
		}
		tr.Err = ignoredMatchError(ignore, vo.err)
		return !ignore, nil
	}
	results, vars, err := st.evalBatch(ctx, cp.scope, in, matchConditionsBudget, cp.matchConditions)
	if err != nil {
		if fail {
			return false, err
		}
		tr.Err = ignoredMatchError(ignore, err)
		return !ignore, nil
	}
	for _, r := range results {
		tr.addCost(&r)
	}
	var errs []error
	for i, r := range results {
		et := ExprTrace{Path: cp.mcPaths[i], Cost: r.Cost, CostEstimated: r.Estimated, Outcome: Passed}
		if r.Err != nil {
			et.Outcome, et.Err = Errored, r.Err.Error()
			errs = append(errs, r.Err)
		} else if r.Value == types.False {
			et.Outcome, et.Value = Failed, "false"
			tr.Expressions = append(tr.Expressions, et)
			cp.traceVariables(tr, vars)
			return false, nil
		} else {
			et.Value = valueString(r.Value)
		}
		tr.Expressions = append(tr.Expressions, et)
	}
	cp.traceVariables(tr, vars)
	if len(errs) > 0 {
		if fail {
			return false, aggregate(errs)
		}
		tr.Err = ignoredMatchError(ignore, aggregate(errs))
		if ignore {
			return false, nil
		}
	}
	return true, nil
}

// ignoredMatchError explains, for the trace, a match condition error that
// did not fail the request: under Ignore the policy is skipped, under an
// unrecognized failurePolicy evaluation goes on.
func ignoredMatchError(ignore bool, err error) error {
	if ignore {
		return fmt.Errorf("match condition error ignored under failurePolicy Ignore; policy skipped: %w", err)
	}
	return fmt.Errorf("match condition error ignored; evaluation continues: %w", err)
}

// aggregate joins errors as apimachinery's NewAggregate prints them.
func aggregate(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		if m := e.Error(); !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return errors.New(msgs[0])
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}
