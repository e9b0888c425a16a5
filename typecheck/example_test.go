package typecheck_test

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/typecheck"
)

func ExampleChecker_Check() {
	// An in-memory schema for apps/v1 Deployment that declares only
	// spec.replicas.
	resolver := typecheck.MapResolver{
		{Group: "apps", Version: "v1", Kind: "Deployment"}: {SchemaProps: spec.SchemaProps{
			Type: []string{"object"},
			Properties: map[string]spec.Schema{
				"spec": {SchemaProps: spec.SchemaProps{
					Type:       []string{"object"},
					Properties: map[string]spec.Schema{"replicas": *spec.Int64Property()},
				}},
			},
		}},
	}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
			}},
		}}},
		Validations: []admissionregistrationv1.Validation{
			{Expression: "object.spec.replicas <= 5"},
			{Expression: "object.replicas > 1"},
		},
	}}
	checker, err := typecheck.NewChecker(typecheck.Options{Schemas: resolver})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range checker.Check(p).Warnings {
		fmt.Printf("%s:\n%s", w.FieldRef, w.Warning)
	}
	// Output:
	// spec.validations[1].expression:
	// apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'
	//  | object.replicas > 1
	//  | ......^
}
