package typecheck_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

func matching(group, version, resource, validation string) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := vap(expr(validation))
	p.Spec.MatchConstraints = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
		RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource},
		}},
	}}}
	return p
}

// TestEveryServedKindIsChecked walks every resource a 1.37 kube-apiserver
// serves by default (k8s.io/api's GA versions, apiextensions.k8s.io and
// apiregistration.k8s.io) and checks that a policy matching it is
// type-checked against its kind: nothing is skipped for want of a schema.
func TestEveryServedKindIsChecked(t *testing.T) {
	checker, err := typecheck.NewChecker(typecheck.Options{Env: newEnv(t)})
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	served := 0
	for _, r := range builtin.Resources() {
		if strings.Contains(r.Version, "alpha") || strings.Contains(r.Version, "beta") {
			continue
		}
		served++
		p := matching(r.Group, r.Version, r.Plural, "object.vapkitNoSuchField == 1")
		if u := checker.Unchecked(p); len(u) != 0 {
			t.Errorf("%s/%s %s: Unchecked() = %v, want none", r.Group, r.Version, r.Plural, u)
		}
		got := checker.Check(p).Warnings
		want := fmt.Sprintf("%v: ERROR: <input>:1:7: undefined field 'vapkitNoSuchField'", r.GroupVersionKind())
		if len(got) != 1 || !strings.HasPrefix(got[0].Warning, want) {
			t.Errorf("%s/%s %s: Check() = %v, want a warning starting %q", r.Group, r.Version, r.Plural, got, want)
		}
	}
	if served < 60 {
		t.Errorf("only %d served resources, want the whole default set", served)
	}
}

// TestAPIExtensionsKinds reproduces the API server's warnings for
// apiextensions.k8s.io and apiregistration.k8s.io kinds byte for byte
// (conformance/typecheckdiff compares them with upstream's checker).
func TestAPIExtensionsKinds(t *testing.T) {
	checker, err := typecheck.NewChecker(typecheck.Options{Env: newEnv(t)})
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	const crd = "apiextensions.k8s.io/v1, Kind=CustomResourceDefinition: "
	tests := []struct {
		name, group, resource, expr string
		want                        string // "" for no warning
	}{
		{
			name: "nested JSONSchemaProps is an object without fields", group: "apiextensions.k8s.io", resource: "customresourcedefinitions",
			expr: "object.spec.versions.all(v, v.schema.openAPIV3Schema.properties['spec'].type == 'object')",
			want: crd + "ERROR: <input>:1:72: undefined field 'type'\n" +
				" | object.spec.versions.all(v, v.schema.openAPIV3Schema.properties['spec'].type == 'object')\n" +
				" | .......................................................................^\n",
		},
		{
			name: "top-level schema fields are typed", group: "apiextensions.k8s.io", resource: "customresourcedefinitions",
			expr: "object.spec.versions.all(v, v.schema.openAPIV3Schema.type == 'object' && v.served)",
		},
		{
			name: "dashed field escaped", group: "apiextensions.k8s.io", resource: "customresourcedefinitions",
			expr: "object.spec.versions.all(v, v.schema.openAPIV3Schema.x__dash__kubernetes__dash__list__dash__map__dash__keys.size() == 'one')",
			want: crd + "ERROR: <input>:1:116: found no matching overload for '_==_' applied to '(int, string)'\n" +
				" | object.spec.versions.all(v, v.schema.openAPIV3Schema.x__dash__kubernetes__dash__list__dash__map__dash__keys.size() == 'one')\n" +
				" | ...................................................................................................................^\n",
		},
		{
			name: "dashed field indexed", group: "apiextensions.k8s.io", resource: "customresourcedefinitions",
			expr: "object.spec.versions.all(v, v.schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'] == true)",
			want: crd + "ERROR: <input>:1:53: found no matching overload for '_[_]' applied to '(CustomResourceDefinition.spec.versions.@idx.schema.openAPIV3Schema, string)'\n" +
				" | object.spec.versions.all(v, v.schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'] == true)\n" +
				" | ....................................................^\n",
		},
		{
			name: "APIService", group: "apiregistration.k8s.io", resource: "apiservices",
			expr: "object.spec.insecureSkipTLSVerify == 'false'",
			want: "apiregistration.k8s.io/v1, Kind=APIService: ERROR: <input>:1:35: found no matching overload for '_==_' applied to '(bool, string)'\n" +
				" | object.spec.insecureSkipTLSVerify == 'false'\n" +
				" | ..................................^\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checker.Check(matching(tc.group, "v1", tc.resource, tc.expr)).Warnings
			var text string
			if len(got) == 1 {
				text = got[0].Warning
			}
			if len(got) > 1 || text != tc.want {
				t.Errorf("Check(%q) = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

// TestUnchecked reports the kinds a checker has no schema for.
func TestUnchecked(t *testing.T) {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names":    map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}},
		},
	}}
	kinds, err := manifest.NewResourceMapper(crd)
	if err != nil {
		t.Fatalf("NewResourceMapper() = %v", err)
	}
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	p := matching("example.com", "v1", "widgets", "object.spec.size == 1")

	builtinOnly, err := typecheck.NewChecker(typecheck.Options{Env: newEnv(t), Resources: kinds})
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	got := builtinOnly.Unchecked(p)
	if len(got) != 1 || got[0].GVK != widget || !errors.Is(got[0].Err, typecheck.ErrSchemaNotFound) {
		t.Errorf("Unchecked() = %v, want %v with ErrSchemaNotFound", got, widget)
	}
	if w := builtinOnly.Check(p).Warnings; w != nil {
		t.Errorf("Check() = %v, want none for an unchecked kind", w)
	}

	crdSchemas, err := typecheck.NewCRDResolver(crd)
	if err != nil {
		t.Fatalf("NewCRDResolver() = %v", err)
	}
	withCRD, err := typecheck.NewChecker(typecheck.Options{Env: newEnv(t), Schemas: typecheck.Combine(typecheck.BuiltinResolver(), crdSchemas), Resources: kinds})
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	if got := withCRD.Unchecked(p); got != nil {
		t.Errorf("Unchecked() with the CRD's schema = %v, want none", got)
	}
	if got := withCRD.Unchecked(nil); got != nil {
		t.Errorf("Unchecked(nil) = %v, want nil", got)
	}
}
