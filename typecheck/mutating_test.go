package typecheck_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/typecheck"
)

// TestValidateMutatingPolicy pins the API server's create validation of
// MutatingAdmissionPolicies (k8s.io/kubernetes validation.go
// validateMutatingAdmissionPolicySpec, validateMutation): paths and
// messages as upstream's TestValidateMutatingAdmissionPolicy expects them.
func TestValidateMutatingPolicy(t *testing.T) {
	const base = `
metadata: {name: p}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules: [{apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.spec{replicas: 1}}"}
`
	tests := []struct {
		name string
		edit func(s string) string
		want []string
	}{
		{name: "valid", edit: func(s string) string { return s }},
		{name: "no mutations", edit: func(s string) string { return s[:strings.Index(s, "  mutations:")] + "  mutations: []\n" },
			want: []string{"spec.mutations: Required value: mutations must contain at least one item"}},
		{name: "no reinvocation policy", edit: func(s string) string { return strings.Replace(s, "  reinvocationPolicy: Never\n", "", 1) },
			want: []string{"spec.reinvocationPolicy: Required value"}},
		{name: "bad reinvocation policy", edit: func(s string) string { return strings.Replace(s, "Never", "Sometimes", 1) },
			want: []string{`spec.reinvocationPolicy: Unsupported value: "Sometimes": supported values: "IfNeeded", "Never"`}},
		{name: "DELETE", edit: func(s string) string {
			return strings.Replace(s, `operations: ["CREATE"]`, `operations: ["CREATE", "DELETE"]`, 1)
		},
			want: []string{`spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`}},
		{name: "empty patch type", edit: func(s string) string { return strings.Replace(s, "patchType: ApplyConfiguration", `patchType: ""`, 1) },
			want: []string{"spec.mutations[0].patchType: Required value"}},
		{name: "unknown patch type", edit: func(s string) string {
			return strings.Replace(s, "patchType: ApplyConfiguration", "patchType: Merge", 1)
		},
			want: []string{`spec.mutations[0].patchType: Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"`}},
		{name: "JSONPatch without jsonPatch", edit: func(s string) string {
			return strings.Replace(s, "patchType: ApplyConfiguration", "patchType: JSONPatch", 1)
		},
			want: []string{"spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch",
				`spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch`}},
		{name: "blank expression", edit: func(s string) string { return strings.Replace(s, "Object{spec: Object.spec{replicas: 1}}", "  ", 1) },
			want: []string{"spec.mutations[0].applyConfiguration.expression: Required value"}},
		{name: "wrong result type", edit: func(s string) string { return strings.Replace(s, "Object{spec: Object.spec{replicas: 1}}", "'x'", 1) },
			want: []string{`spec.mutations[0].applyConfiguration.expression: Invalid value: "'x'": must evaluate to Object but got string`}},
		{name: "JSONPatch result type", edit: func(s string) string {
			return strings.Replace(strings.Replace(s, "patchType: ApplyConfiguration", "patchType: JSONPatch", 1),
				`applyConfiguration: {expression: "Object{spec: Object.spec{replicas: 1}}"}`, `jsonPatch: {expression: "{}"}`, 1)
		},
			want: []string{`spec.mutations[0].jsonPatch.expression: Invalid value: "{}": must evaluate to list(JSONPatch) but got map(dyn, dyn)`}},
		{name: "variables do not see Object", edit: func(s string) string {
			return strings.Replace(s, "  mutations:", "  variables: [{name: o, expression: \"Object{}\"}]\n  mutations:", 1)
		},
			want: []string{"spec.variables[0].expression: Invalid value: \"Object{}\": compilation failed: ERROR: <input>:1:7: undeclared reference to 'Object' (in container '')\n | Object{}\n | ......^"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &admissionregistrationv1.MutatingAdmissionPolicy{}
			if err := yaml.UnmarshalStrict([]byte(tc.edit(base)), p); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range typecheck.ValidateMutatingPolicy(nil, p) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateMutatingPolicy() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateMutatingBinding(t *testing.T) {
	b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict([]byte(`
metadata: {name: b}
spec:
  matchResources:
    resourceRules: [{apiGroups: ["apps"], apiVersions: ["v1"], operations: ["DELETE"], resources: ["deployments"]}]
`), b); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range typecheck.ValidateMutatingBinding(b) {
		got = append(got, e.Error())
	}
	want := []string{"spec.policyName: Required value",
		`spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ValidateMutatingBinding() (-want +got):\n%s", diff)
	}
}
