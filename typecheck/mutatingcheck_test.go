package typecheck_test

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/typecheck"
)

// mutatingPolicy parses the spec of a MAP matching Deployments (or, with
// widgets, the Widget CRD of mapWidgetCRD).
func mutatingPolicy(t *testing.T, spec string) *admissionregistrationv1.MutatingAdmissionPolicy {
	t.Helper()
	p := &admissionregistrationv1.MutatingAdmissionPolicy{}
	doc := "metadata: {name: p}\nspec:\n  reinvocationPolicy: Never\n  matchConstraints:\n    resourceRules: [{apiGroups: [apps, example.com], apiVersions: [v1], operations: [CREATE], resources: [deployments, widgets]}]\n" + spec
	if err := yaml.UnmarshalStrict([]byte(doc), p); err != nil {
		t.Fatal(err)
	}
	return p
}

const mapWidgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// TestCheckMutating: vapkit's own type checking of MAP expressions, per
// expression and kind.
func TestCheckMutating(t *testing.T) {
	const dep = "apps/v1, Kind=Deployment: "
	const widget = "example.com/v1, Kind=Widget: "
	tests := []struct {
		name string
		spec string
		crds bool
		// want maps fieldRef to the start of each kind's text.
		want map[string][]string
	}{
		{name: "clean", spec: `  variables: [{name: r, expression: "object.spec.replicas"}]
  matchConditions: [{name: m, expression: "variables.r > 0"}]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.spec{replicas: variables.r + 1, template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: 'a', image: 'b', ports: [Object.spec.template.spec.containers.ports{containerPort: 80}]}]}}}}"}
  - patchType: JSONPatch
    jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('a/b'), value: string(object.spec.replicas)}]"}
`},
		{name: "undefined field in a variable", spec: `  variables: [{name: r, expression: "object.spec.replica"}]
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[JSONPatch{op: 'remove', path: '/spec/paused'}]"}
`, want: map[string][]string{"spec.variables[0].expression": {dep + "ERROR: <input>:1:12: undefined field 'replica'"}}},
		{name: "match condition", spec: `  matchConditions: [{name: m, expression: "object.spec.paused == 1"}]
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[JSONPatch{op: 'remove', path: '/spec/paused'}]"}
`, want: map[string][]string{"spec.matchConditions[0].expression": {dep + "ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(bool, int)'"}}},
		{name: "typed value in a JSON patch", spec: `  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/spec/x', value: object.spec.replicaz}]"}
`, want: map[string][]string{"spec.mutations[0].jsonPatch.expression": {dep + "ERROR: <input>:1:58: undefined field 'replicaz'"}}},
		{name: "unknown field of an Object", spec: `  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.spec{replica: 2}}"}
`, want: map[string][]string{"spec.mutations[0].applyConfiguration.expression": {dep + "ERROR: <input>:1:33: field \"replica\" is not a property of Object.spec in the schema"}}},
		{name: "type name off the schema", spec: `  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.specs{replicas: 2}}"}
`, want: map[string][]string{"spec.mutations[0].applyConfiguration.expression": {dep + "ERROR: <input>:1:26: type Object.specs names no field of the schema: \"specs\" is not a property of Object"}}},
		{name: "literal of the wrong type", spec: `  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.spec{replicas: '2', paused: 1}}"}
`, want: map[string][]string{"spec.mutations[0].applyConfiguration.expression": {dep + "ERROR: <input>:1:36: field \"replicas\" of Object.spec is an integer in the schema, got string"}}},
		{name: "list items and maps", spec: `  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{metadata: Object.metadata{labels: {'a': 'b'}}, spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{containers: [Object.spec.template.spec.containers{nam: 'x'}]}}}}"}
`, want: map[string][]string{"spec.mutations[0].applyConfiguration.expression": {dep + "ERROR: <input>:1:"}}},
		{name: "result type", spec: `  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "object.metadata.name"}
`, want: map[string][]string{"spec.mutations[0].applyConfiguration.expression": {dep + "must evaluate to Object but got string"}}},
		{name: "custom kind", crds: true, spec: `  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.spec{size: 'big', colour: 'red', extra: Object.spec.extra{anything: 1}}}"}
`, want: map[string][]string{"spec.mutations[0].applyConfiguration.expression": {
			dep + "ERROR: <input>:1:30: field \"size\" is not a property of Object.spec in the schema",
			widget + "ERROR: <input>:1:32: field \"size\" of Object.spec is an integer in the schema, got string\n" +
				" | Object{spec: Object.spec{size: 'big', colour: 'red', extra: Object.spec.extra{anything: 1}}}\n" +
				" | ...............................^\n" +
				"ERROR: <input>:1:45: field \"colour\" is not a property of Object.spec in the schema\n" +
				" | Object{spec: Object.spec{size: 'big', colour: 'red', extra: Object.spec.extra{anything: 1}}}\n" +
				" | ............................................^",
		}}},
	}
	plain, err := typecheck.NewChecker(typecheck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(mapWidgetCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	withCRDs, err := typecheck.NewChecker(typecheck.Options{CRDs: []*unstructured.Unstructured{crd}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := plain
			if tc.crds {
				c = withCRDs
			}
			got := map[string][]string{}
			for _, w := range c.CheckMutating(mutatingPolicy(t, tc.spec)) {
				for _, text := range strings.Split(strings.TrimSuffix(w.Warning, "\n"), "\n\n") {
					got[w.FieldRef] = append(got[w.FieldRef], text)
				}
			}
			if len(tc.want) == 0 && len(got) == 0 {
				return
			}
			for ref, texts := range got {
				wants := tc.want[ref]
				if len(wants) != len(texts) {
					t.Errorf("%s: got %q, want %d kinds starting %q", ref, texts, len(wants), wants)
					continue
				}
				for i := range texts {
					if !strings.HasPrefix(texts[i], wants[i]) {
						t.Errorf("%s: got %q, want it to start with %q", ref, texts[i], wants[i])
					}
				}
			}
			// The Widget's spec.extra preserves unknown fields: nothing
			// under it is checked.
			for _, texts := range got {
				for _, text := range texts {
					if strings.HasPrefix(text, widget) && (strings.Contains(text, `"extra"`) || strings.Contains(text, `"anything"`) || strings.Contains(text, "type Object.spec.extra")) {
						t.Errorf("Widget text flags spec.extra: %q", text)
					}
				}
			}
			for ref := range tc.want {
				if _, ok := got[ref]; !ok {
					t.Errorf("%s: no warning, want %q", ref, tc.want[ref])
				}
			}
		})
	}
	if got := plain.CheckMutating(nil); got != nil {
		t.Errorf("CheckMutating(nil) = %v, want nil", got)
	}
}

// FuzzCheckMutating: any apply configuration expression is checked
// without a panic.
func FuzzCheckMutating(f *testing.F) {
	for _, s := range []string{
		"Object{spec: Object.spec{replicas: 2}}",
		"Object{spec: Object.specs{x: [1, {'a': Object.spec.template{}}]}}",
		"object.spec.template.spec.containers.map(c, Object.spec.template.spec.containers{name: c.name, ports: []})",
		"Object{metadata: Object.metadata{labels: {'a': null}}}",
		"[].all(x, Object{}.spec == 1) ? Object{} : Object{x: b'y'}",
	} {
		f.Add(s)
	}
	c, err := typecheck.NewChecker(typecheck.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		p := &admissionregistrationv1.MutatingAdmissionPolicy{}
		p.Spec.MatchConstraints = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
				APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
			}},
		}}}
		p.Spec.Mutations = []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
			ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: expr}}}
		c.CheckMutating(p)
	})
}
