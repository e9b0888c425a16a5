package apivalidation_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/exprcheck"
)

// The tests below pin ValidateMutatingPolicy and ValidateMutatingBinding to
// the Kubernetes 1.37.2 release's pkg/apis/admissionregistration/validation
// (validation.go): every message and path is the one the cited function
// builds. The expected CEL details were produced by the upstream compiler
// those functions call (k8s.io/apiserver v0.37.2 plugincel
// CompositedCompiler.CompileCELExpression with the patch types declared).

// mapBase is a valid, defaulted MutatingAdmissionPolicy.
const mapBase = `
metadata: {name: p}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    matchPolicy: Equivalent
    namespaceSelector: {}
    objectSelector: {}
    resourceRules: [{apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"], scope: "*"}]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: "Object{spec: Object.spec{replicas: 1}}"}
`

func parseMAP(t *testing.T, text string) *admissionregistrationv1.MutatingAdmissionPolicy {
	t.Helper()
	p := &admissionregistrationv1.MutatingAdmissionPolicy{}
	if err := yaml.UnmarshalStrict([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateMutatingPolicyUpstreamMessages(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				panic(fmt.Sprintf("%q not in the base policy", old))
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	const apply = `applyConfiguration: {expression: "Object{spec: Object.spec{replicas: 1}}"}`
	tests := []struct {
		name     string
		upstream string // the function of validation.go that reports it
		edit     func(string) string
		want     []string
	}{
		{name: "valid", upstream: "validateMutatingAdmissionPolicySpec", edit: func(s string) string { return s }},
		{name: "no name", upstream: "validateMutatingAdmissionPolicy (ValidateObjectMeta)", edit: replace("metadata: {name: p}", "metadata: {}"),
			want: []string{"metadata.name: Required value: name or generateName is required"}},
		{name: "no failurePolicy", upstream: "validateMutatingAdmissionPolicySpec", edit: replace("  failurePolicy: Fail\n", ""),
			want: []string{"spec.failurePolicy: Required value"}},
		{name: "bad failurePolicy", upstream: "validateMutatingAdmissionPolicySpec", edit: replace("failurePolicy: Fail", "failurePolicy: Maybe"),
			want: []string{`spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`}},
		{name: "no matchConstraints", upstream: "validateMutatingAdmissionPolicySpec", edit: func(s string) string {
			return s[:strings.Index(s, "  matchConstraints:")] + s[strings.Index(s, "  mutations:"):]
		}, want: []string{"spec.matchConstraints: Required value"}},
		{name: "no resourceRules", upstream: "validateMutatingAdmissionPolicySpec", edit: func(s string) string {
			return s[:strings.Index(s, "    resourceRules:")] + s[strings.Index(s, "  mutations:"):]
		}, want: []string{"spec.matchConstraints.resourceRules: Required value"}},
		{name: "DELETE", upstream: "validateMutatingAdmissionPolicySpec (supportedMutatingOperations)",
			edit: replace(`operations: ["CREATE"]`, `operations: ["DELETE", "CONNECT"]`),
			want: []string{`spec.matchConstraints.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`}},
		{name: "paramKind", upstream: "validateParamKind", edit: replace("  reinvocationPolicy: Never\n", "  reinvocationPolicy: Never\n  paramKind: {apiVersion: \"a/b/c\", kind: \"\"}\n"),
			want: []string{`spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`, "spec.paramKind.kind: Required value"}},
		{name: "matchConditions", upstream: "validateMatchConditions, validateMatchCondition", edit: replace("  mutations:",
			"  matchConditions: [{name: a, expression: \"true\"}, {name: a, expression: \" \"}, {name: \"-x\", expression: \"1\"}]\n  mutations:"),
			want: []string{"spec.matchConditions[1].expression: Required value",
				`spec.matchConditions[1].name: Duplicate value: "a"`,
				"spec.matchConditions[2].expression: Invalid value: \"1\": must evaluate to bool but got int",
				`spec.matchConditions[2].name: Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{name: "matchConstraints rules", upstream: "validateMatchResources, validateNamedRuleWithOperations, validateRule", edit: replace(
			`resourceRules: [{apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"], scope: "*"}]`,
			`resourceRules: [{apiGroups: ["apps"], apiVersions: [""], operations: ["CREATE"], resources: ["*", "deployments"], resourceNames: ["a/b"], scope: "Everywhere"}]`),
			want: []string{`spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: "a/b": may not contain '/'`,
				"spec.matchConstraints.resourceRules[0].apiVersions[0]: Required value",
				`spec.matchConstraints.resourceRules[0].resources: Invalid value: ["*","deployments"]: if '*' is present, must not specify other resources without subresources`,
				`spec.matchConstraints.resourceRules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"`}},
		{name: "no mutations", upstream: "validateMutatingAdmissionPolicySpec", edit: func(s string) string {
			return s[:strings.Index(s, "  mutations:")] + "  mutations: []\n"
		}, want: []string{"spec.mutations: Required value: mutations must contain at least one item"}},
		{name: "no patchType", upstream: "validateMutation", edit: replace("patchType: ApplyConfiguration", `patchType: ""`),
			want: []string{"spec.mutations[0].patchType: Required value"}},
		{name: "unknown patchType", upstream: "validateMutation (supportedPatchType)", edit: replace("patchType: ApplyConfiguration", "patchType: StrategicMerge"),
			want: []string{`spec.mutations[0].patchType: Unsupported value: "StrategicMerge": supported values: "ApplyConfiguration", "JSONPatch"`}},
		{name: "JSONPatch with applyConfiguration", upstream: "validateMutation", edit: replace("patchType: ApplyConfiguration", "patchType: JSONPatch"),
			want: []string{"spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch",
				`spec.mutations[0].applyConfiguration: Invalid value: "{applyConfiguration}": must not be specified when patchType is JSONPatch`}},
		{name: "ApplyConfiguration with jsonPatch", upstream: "validateMutation", edit: replace(apply, `jsonPatch: {expression: "[]"}`),
			want: []string{"spec.mutations[0].applyConfiguration: Required value: must be specified when patchType is ApplyConfiguration",
				`spec.mutations[0].jsonPatch: Invalid value: "{jsonPatch}": must not be specified when patchType is ApplyConfiguration`}},
		{name: "both set", upstream: "validateMutation", edit: replace(apply, apply+"\n    jsonPatch: {expression: \"[]\"}"),
			want: []string{`spec.mutations[0].jsonPatch: Invalid value: "{jsonPatch}": must not be specified when patchType is ApplyConfiguration`}},
		{name: "blank applyConfiguration expression", upstream: "validateApplyConfiguration", edit: replace("Object{spec: Object.spec{replicas: 1}}", " \\t "),
			want: []string{"spec.mutations[0].applyConfiguration.expression: Required value"}},
		{name: "blank jsonPatch expression", upstream: "validateJSONPatch", edit: func(s string) string {
			return replace(apply, `jsonPatch: {expression: "  "}`)(replace("patchType: ApplyConfiguration", "patchType: JSONPatch")(s))
		}, want: []string{"spec.mutations[0].jsonPatch.expression: Required value"}},
		{name: "trimmed expression in the error", upstream: "validateApplyConfiguration (compiles the trimmed expression)",
			edit: replace("Object{spec: Object.spec{replicas: 1}}", "  'x'  "),
			want: []string{`spec.mutations[0].applyConfiguration.expression: Invalid value: "'x'": must evaluate to Object but got string`}},
		{name: "jsonPatch result type", upstream: "validateJSONPatch", edit: func(s string) string {
			return replace(apply, `jsonPatch: {expression: "[{'op': 'add'}]"}`)(replace("patchType: ApplyConfiguration", "patchType: JSONPatch")(s))
		}, want: []string{`spec.mutations[0].jsonPatch.expression: Invalid value: "[{'op': 'add'}]": must evaluate to list(JSONPatch) but got list(map(string, string))`}},
		{name: "undeclared variable in applyConfiguration", upstream: "validateMutatingAdmissionPolicySpec (createCompiler(true): variables always declared)",
			edit: replace("replicas: 1}", "replicas: variables.n}"),
			want: []string{"spec.mutations[0].applyConfiguration.expression: Invalid value: \"Object{spec: Object.spec{replicas: variables.n}}\": compilation failed: ERROR: <input>:1:45: undefined field 'n'\n | Object{spec: Object.spec{replicas: variables.n}}\n | ............................................^"}},
		{name: "undeclared variable in jsonPatch", upstream: "validateJSONPatch (createCompiler(true))", edit: func(s string) string {
			return replace(apply, `jsonPatch: {expression: "[JSONPatch{op: \"add\", path: \"/x\", value: variables.m}]"}`)(replace("patchType: ApplyConfiguration", "patchType: JSONPatch")(s))
		}, want: []string{"spec.mutations[0].jsonPatch.expression: Invalid value: \"[JSONPatch{op: \\\"add\\\", path: \\\"/x\\\", value: variables.m}]\": compilation failed: ERROR: <input>:1:51: undefined field 'm'\n | [JSONPatch{op: \"add\", path: \"/x\", value: variables.m}]\n | ..................................................^"}},
		{name: "declared variable", upstream: "validateVariable (CompileAndStoreVariable)", edit: func(s string) string {
			return replace("replicas: 1}", "replicas: variables.count}")(replace("  mutations:", "  variables: [{name: count, expression: \"1\"}]\n  mutations:")(s))
		}},
		{name: "variable name and expression", upstream: "validateVariable",
			edit: replace("  mutations:", "  variables: [{name: \"\", expression: \"\"}, {name: \"a-b\", expression: \"1\"}]\n  mutations:"),
			want: []string{"spec.variables[0].name: Required value: name is not specified",
				"spec.variables[0].expression: Required value: expression is not specified",
				`spec.variables[1].name: Invalid value: "a-b": must be a valid CEL identifier`}},
		{name: "no reinvocationPolicy", upstream: "validateMutatingAdmissionPolicySpec", edit: replace("  reinvocationPolicy: Never\n", ""),
			want: []string{"spec.reinvocationPolicy: Required value"}},
		{name: "bad reinvocationPolicy", upstream: "validateMutatingAdmissionPolicySpec (supportedReinvocationPolicies)", edit: replace("reinvocationPolicy: Never", "reinvocationPolicy: Always"),
			want: []string{`spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"`}},
		{name: "order", upstream: "validateMutatingAdmissionPolicySpec (failurePolicy, matchConstraints, mutations, reinvocationPolicy)", edit: func(s string) string {
			return replace("reinvocationPolicy: Never", "reinvocationPolicy: Always")(replace("failurePolicy: Fail", "failurePolicy: Maybe")(replace("patchType: ApplyConfiguration", "patchType: X")(s)))
		}, want: []string{`spec.failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`,
			`spec.mutations[0].patchType: Unsupported value: "X": supported values: "ApplyConfiguration", "JSONPatch"`,
			`spec.reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseMAP(t, tc.edit(mapBase))
			var got []string
			for _, e := range apivalidation.ValidateMutatingPolicy(exprcheck.Compiler(env), p, nil) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateMutatingPolicy() differs from upstream's %s (-want +got):\n%s", tc.upstream, diff)
			}
		})
	}
}

// recorder is an apivalidation.Compiler that accepts every expression and
// records how each was checked.
type recorder struct{ calls *[]string }

func (r recorder) NewScope(bool) apivalidation.Scope { return r }
func (r recorder) Compose()                          { *r.calls = append(*r.calls, "compose") }
func (r recorder) AddVariable(name, expression string, stored bool) error {
	*r.calls = append(*r.calls, fmt.Sprintf("variable %s stored=%v", expression, stored))
	return nil
}
func (r recorder) Check(kind apivalidation.ExprKind, expression string, stored bool) error {
	*r.calls = append(*r.calls, fmt.Sprintf("check %d %s stored=%v", kind, expression, stored))
	return nil
}

// TestValidateMutatingPolicyUpdateStored pins which expressions an update
// checks in the StoredExpressions environment: findMutatingPolicy-
// PreexistingExpressions files old's applyConfiguration and jsonPatch
// expressions in two sets, and both validateApplyConfiguration and
// validateJSONPatch look the new expression up in the applyConfiguration
// set. It also pins that the scope composes before the mutations even
// without variables (createCompiler(true)).
func TestValidateMutatingPolicyUpdateStored(t *testing.T) {
	const (
		a = "Object{spec: Object.spec{replicas: 1}}"
		j = "[]"
	)
	mutation := func(patchType, expr string) string {
		if patchType == "ApplyConfiguration" {
			return fmt.Sprintf("  - patchType: ApplyConfiguration\n    applyConfiguration: {expression: %q}\n", expr)
		}
		return fmt.Sprintf("  - patchType: JSONPatch\n    jsonPatch: {expression: %q}\n", expr)
	}
	head := mapBase[:strings.Index(mapBase, "  mutations:")] + "  mutations:\n"
	old := parseMAP(t, head+mutation("ApplyConfiguration", a)+mutation("JSONPatch", j))
	p := parseMAP(t, head+mutation("ApplyConfiguration", a)+mutation("JSONPatch", a)+mutation("ApplyConfiguration", j)+mutation("JSONPatch", j))
	var calls []string
	if errs := apivalidation.ValidateMutatingPolicy(recorder{&calls}, p, old); len(errs) != 0 {
		t.Fatalf("ValidateMutatingPolicy() = %v", errs)
	}
	want := []string{
		"compose",
		fmt.Sprintf("check %d %s stored=true", apivalidation.ApplyConfiguration, a),
		fmt.Sprintf("check %d %s stored=true", apivalidation.JSONPatch, a), // found in old's applyConfiguration set
		fmt.Sprintf("check %d %s stored=false", apivalidation.ApplyConfiguration, j),
		fmt.Sprintf("check %d %s stored=false", apivalidation.JSONPatch, j), // old's jsonPatch set is never read
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
}

func TestValidateMutatingBindingUpstreamMessages(t *testing.T) {
	tests := []struct {
		name, upstream, text string
		want                 []string
	}{
		{name: "valid", upstream: "validateMutatingAdmissionPolicyBindingSpec", text: "metadata: {name: b}\nspec: {policyName: p}\n"},
		{name: "no policyName", upstream: "validateMutatingAdmissionPolicyBindingSpec", text: "metadata: {name: b}\nspec: {}\n",
			want: []string{"spec.policyName: Required value"}},
		{name: "bad policyName", upstream: "validateMutatingAdmissionPolicyBindingSpec (NameIsDNSSubdomain)", text: "metadata: {name: b}\nspec: {policyName: P_1}\n",
			want: []string{`spec.policyName: Invalid value: "P_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{name: "DELETE", upstream: "validateMutatingAdmissionPolicyBindingSpec (supportedMutatingOperations)",
			text: "metadata: {name: b}\nspec:\n  policyName: p\n  matchResources:\n    matchPolicy: Equivalent\n    namespaceSelector: {}\n    objectSelector: {}\n    resourceRules: [{apiGroups: [\"apps\"], apiVersions: [\"v1\"], operations: [\"DELETE\"], resources: [\"deployments\"], scope: \"*\"}]\n",
			want: []string{`spec.matchResources.resourceRules.operations: Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"`}},
		{name: "paramRef", upstream: "validateParamRef", text: "metadata: {name: b}\nspec:\n  policyName: p\n  paramRef: {name: a, selector: {}, parameterNotFoundAction: Maybe}\n",
			want: []string{"spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
				"spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
				`spec.paramRef.parameterNotFoundAction: Unsupported value: "Maybe": supported values: "Deny", "Allow"`}},
		{name: "paramRef without name or selector", upstream: "validateParamRef", text: "metadata: {name: b}\nspec:\n  policyName: p\n  paramRef: {}\n",
			want: []string{"spec.paramRef: Required value: one of name or selector must be specified", "spec.paramRef.parameterNotFoundAction: Required value"}},
		{name: "matchResources without defaults", upstream: "validateMatchResources", text: "metadata: {name: b}\nspec:\n  policyName: p\n  matchResources: {}\n",
			want: []string{"spec.matchResources.matchPolicy: Required value", "spec.matchResources.namespaceSelector: Required value", "spec.matchResources.objectSelector: Required value"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
			if err := yaml.UnmarshalStrict([]byte(tc.text), b); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range apivalidation.ValidateMutatingBinding(b) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateMutatingBinding() differs from upstream's %s (-want +got):\n%s", tc.upstream, diff)
			}
		})
	}
}
