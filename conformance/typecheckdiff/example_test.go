package typecheckdiff_test

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/vapkit/vapkit/conformance/typecheckdiff"
)

func ExampleChecker_Compare() {
	c, err := typecheckdiff.NewChecker()
	if err != nil {
		fmt.Println(err)
		return
	}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
			}},
		}}},
		Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas == 'three'"}},
	}}
	got := c.Compare(p)
	fmt.Printf("agree: %t\n", got.Diff == "")
	for _, w := range got.Upstream {
		fmt.Printf("%s:\n%s", w.FieldRef, w.Warning)
	}
	// Output:
	// agree: true
	// spec.validations[0].expression:
	// apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_==_' applied to '(int, string)'
	//  | object.spec.replicas == 'three'
	//  | .....................^
}
