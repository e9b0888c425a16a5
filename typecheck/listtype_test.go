package typecheck_test

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/typecheck"
)

// TestListTypeIgnoredByTypeChecking shows why celenv/listtype is not wired
// into type checking: as upstream's, the checker declares every list of a
// schema list(T), whatever its x-kubernetes-list-type, so the warnings are
// the same for atomic, set and map lists.
func TestListTypeIgnoredByTypeChecking(t *testing.T) {
	list := func(listType string) *spec.Schema {
		item := spec.StringProperty()
		if listType == "map" {
			item = &spec.Schema{SchemaProps: spec.SchemaProps{
				Type:       []string{"object"},
				Properties: map[string]spec.Schema{"name": *spec.StringProperty()},
			}}
		}
		s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: item}}}
		s.AddExtension("x-kubernetes-list-type", listType)
		if listType == "map" {
			s.AddExtension("x-kubernetes-list-map-keys", []any{"name"})
		}
		return s
	}
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
			}},
		}}},
		Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.items + 1 == 0"}},
	}}
	want := map[string]string{
		"atomic": "'_+_' applied to '(list(string), int)'",
		"set":    "'_+_' applied to '(list(string), int)'",
		"map":    "'_+_' applied to '(list(Deployment.spec.items.@idx), int)'",
	}
	for _, lt := range []string{"atomic", "set", "map"} {
		t.Run(lt, func(t *testing.T) {
			schema := &spec.Schema{SchemaProps: spec.SchemaProps{
				Type: []string{"object"},
				Properties: map[string]spec.Schema{"spec": {SchemaProps: spec.SchemaProps{
					Type:       []string{"object"},
					Properties: map[string]spec.Schema{"items": *list(lt)},
				}}},
			}}
			checker, err := typecheck.NewChecker(typecheck.Options{Schemas: typecheck.MapResolver{
				{Group: "apps", Version: "v1", Kind: "Deployment"}: schema,
			}})
			if err != nil {
				t.Fatalf("NewChecker() = %v", err)
			}
			got := checker.Check(p).Warnings
			if len(got) != 1 || !strings.Contains(got[0].Warning, want[lt]) {
				t.Errorf("Check() = %v, want one warning containing %q", got, want[lt])
			}
		})
	}
}
