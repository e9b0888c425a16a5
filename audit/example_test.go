package audit_test

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/vapkit/vapkit/audit"
)

func Example() {
	// One collector per policy; values arrive from every binding and param.
	c := audit.NewCollector("limit-audit")
	c.Add("limit-name", "limit-a") // binding a
	c.Add("checked-kind", "Deployment")
	c.Add("limit-name", "limit-b") // binding b
	c.Add("checked-kind", "Deployment")
	c.Add("empty", "   ") // blank results are not published
	for _, a := range c.Annotations() {
		fmt.Printf("%s: %q\n", a.Key, a.Value)
	}

	// One validation failure list per request, for bindings with Audit.
	value, ok := audit.EncodeValidationFailures([]audit.ValidationFailure{{
		Message:           "fewer than 2 replicas",
		Policy:            "replica-audit",
		Binding:           "replica-audit-binding",
		ExpressionIndex:   1,
		ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit},
	}})
	if ok {
		fmt.Printf("%s: %s\n", audit.ValidationFailureKey, value)
	}
	// Output:
	// limit-audit/limit-name: "limit-a, limit-b"
	// limit-audit/checked-kind: "Deployment"
	// validation.policy.admission.k8s.io/validation_failure: [{"message":"fewer than 2 replicas","policy":"replica-audit","binding":"replica-audit-binding","expressionIndex":1,"validationActions":["Audit"]}]
}
