package typecheck

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/exprcheck"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Messages of k8s.io/apimachinery that several cases share.
const (
	dns1123SubdomainMsg = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	dns1035LabelMsg     = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`
	qualifiedNameMsg    = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
)

func validationEnv(t *testing.T, v celenv.Version) *celenv.Env {
	t.Helper()
	env, err := celenv.New(celenv.Options{Version: v})
	if err != nil {
		t.Fatalf("celenv.New(%v) error: %v", v, err)
	}
	return env
}

// validPolicy is a minimal policy the API server accepts, after defaulting.
func validPolicy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "config"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: ruleWithOps([]string{"CREATE"}, []string{""}, []string{"v1"}, []string{"pods"}),
				}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.x < 100"}},
		},
	}
}

func ruleWithOps(ops, groups, versions, resources []string) admissionregistrationv1.RuleWithOperations {
	r := admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
		APIGroups: groups, APIVersions: versions, Resources: resources,
	}}
	for _, o := range ops {
		r.Operations = append(r.Operations, admissionregistrationv1.OperationType(o))
	}
	return r
}

func ptrTo[T any](v T) *T { return &v }

func fieldErrorStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// TestValidatePolicy has one case per rule of upstream's
// validateValidatingAdmissionPolicy. Case names in quotes are those of
// upstream's TestValidateValidatingAdmissionPolicy
// (k8s.io/kubernetes pkg/apis/admissionregistration/validation/validation_test.go),
// whose expectations are substrings of the full messages checked here.
func TestValidatePolicy(t *testing.T) {
	env := validationEnv(t, celenv.Version1_37)
	manyConditions := make([]admissionregistrationv1.MatchCondition, 65)
	for i := range manyConditions {
		manyConditions[i] = admissionregistrationv1.MatchCondition{Name: fmt.Sprintf("c%d", i), Expression: "true"}
	}
	manyAnnotations := make([]admissionregistrationv1.AuditAnnotation, 21)
	for i := range manyAnnotations {
		manyAnnotations[i] = admissionregistrationv1.AuditAnnotation{Key: fmt.Sprintf("k%d", i), ValueExpression: "'v'"}
	}
	tooMany := `spec.auditAnnotations: Invalid value: [`
	for i := range 21 {
		if i > 0 {
			tooMany += ","
		}
		tooMany += fmt.Sprintf(`{"Key":"k%d","ValueExpression":"'v'"}`, i)
	}
	tooMany += `]: must not have more than 20 auditAnnotations`

	tests := []struct {
		name   string
		modify func(p *admissionregistrationv1.ValidatingAdmissionPolicy)
		// raw skips defaulting, to reach the Required checks of defaulted
		// fields.
		raw  bool
		want []string
	}{{
		name:   "valid",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {},
	}, {
		name:   `"metadata.name validation"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Name = "!!!!" },
		want: []string{
			`metadata.name: Invalid value: "!!!!": ` + dns1123SubdomainMsg,
			`spec.auditAnnotations[0].key: Invalid value: "!!!!/a": prefix part ` + dns1123SubdomainMsg,
		},
	}, {
		name: "metadata.name is required; audit annotation keys need it",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Name = ""
			p.Spec.AuditAnnotations = nil
		},
		want: []string{`metadata.name: Required value: name or generateName is required`},
	}, {
		name:   "metadata.namespace is forbidden",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Namespace = "default" },
		want:   []string{`metadata.namespace: Forbidden: not allowed on this type`},
	}, {
		name: `"failure policy validation"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.FailurePolicy = ptrTo(admissionregistrationv1.FailurePolicyType("other"))
		},
		want: []string{`spec.failurePolicy: Unsupported value: "other": supported values: "Fail", "Ignore"`},
	}, {
		name:   "failurePolicy is required (it is defaulted)",
		raw:    true,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) { p.Spec.FailurePolicy = nil },
		want: []string{
			`spec.failurePolicy: Required value`,
			`spec.matchConstraints.matchPolicy: Required value`,
			`spec.matchConstraints.namespaceSelector: Required value`,
			`spec.matchConstraints.objectSelector: Required value`,
		},
	}, {
		name: `"API version is required in ParamKind"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "test.example.com", Kind: "Example"}
		},
		want: []string{`spec.paramKind.apiVersion: Invalid value: "test.example.com": ` + dns1035LabelMsg},
	}, {
		name: "paramKind apiVersion empty",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{Kind: "Example"}
		},
		want: []string{`spec.paramKind.apiVersion: Required value`},
	}, {
		name: `"API kind is required in ParamKind"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "test.example.com/v1"}
		},
		want: []string{`spec.paramKind.kind: Required value`},
	}, {
		name: `"API version format in ParamKind"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "test.example.com/!!!", Kind: "Example"}
		},
		want: []string{`spec.paramKind.apiVersion: Invalid value: "!!!": ` + dns1035LabelMsg},
	}, {
		name: `"API group format in ParamKind"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "!!!/v1", Kind: "ReplicaLimit"}
		},
		want: []string{`spec.paramKind.apiVersion: Invalid value: "!!!": ` + dns1123SubdomainMsg},
	}, {
		name: "paramKind apiVersion with two slashes",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "a/b/c", Kind: "Example"}
		},
		want: []string{`spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`},
	}, {
		name: "paramKind version must be specified",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "example.com/", Kind: "Example"}
		},
		want: []string{`spec.paramKind.apiVersion: Invalid value: "example.com/": version must be specified`},
	}, {
		name: "paramKind kind may have mixed case but is otherwise a DNS-1035 label",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "Config_Map"}
		},
		want: []string{`spec.paramKind.kind: Invalid value: "Config_Map": may have mixed case, but should otherwise match: ` + dns1035LabelMsg},
	}, {
		name: `"MatchConstraints is required"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints = nil
		},
		want: []string{`spec.matchConstraints: Required value`},
	}, {
		name: `"matchConstraints.resourceRules is required"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints = &admissionregistrationv1.MatchResources{}
		},
		want: []string{`spec.matchConstraints.resourceRules: Required value`},
	}, {
		name: `"matchResources validation: matchPolicy"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.MatchPolicy = ptrTo(admissionregistrationv1.MatchPolicyType("other"))
		},
		want: []string{`spec.matchConstraints.matchPolicy: Unsupported value: "other": supported values: "Equivalent", "Exact"`},
	}, {
		name: "selectors are validated strictly",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "env", Operator: metav1.LabelSelectorOpIn,
			}}}
			p.Spec.MatchConstraints.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b c"}}
		},
		want: []string{
			"spec.matchConstraints.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
			`spec.matchConstraints.objectSelector.matchLabels: Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
		},
	}, {
		name: `"matchResources resourceNames check"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].ResourceNames = []string{"/./."}
		},
		want: []string{`spec.matchConstraints.resourceRules[0].resourceNames[0]: Invalid value: "/./.": may not contain '/'`},
	}, {
		name: `"matchResources resourceNames cannot duplicate"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].ResourceNames = []string{"test", "test"}
		},
		want: []string{`spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: "test"`},
	}, {
		name: `"Operations must not be empty or nil" (resourceRules and excludeResourceRules)`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Operations = nil
			p.Spec.MatchConstraints.ExcludeResourceRules = []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: ruleWithOps([]string{}, []string{"a"}, []string{"a"}, []string{"a"}),
			}}
		},
		want: []string{
			`spec.matchConstraints.resourceRules[0].operations: Required value`,
			`spec.matchConstraints.excludeResourceRules[0].operations: Required value`,
		},
	}, {
		name: `"\"\" is NOT a valid operation", "operation must be either create/update/delete/connect"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].RuleWithOperations = ruleWithOps([]string{"", "PATCH"}, []string{"a"}, []string{"a"}, []string{"a"})
		},
		want: []string{
			`spec.matchConstraints.resourceRules[0].operations[0]: Unsupported value: "": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`,
			`spec.matchConstraints.resourceRules[0].operations[1]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`,
		},
	}, {
		name: `"wildcard operation cannot be mixed with other strings"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].RuleWithOperations = ruleWithOps([]string{"CREATE", "*"}, []string{"a"}, []string{"a"}, []string{"a"})
		},
		want: []string{`spec.matchConstraints.resourceRules[0].operations: Invalid value: ["CREATE","*"]: if '*' is present, must not specify other operations`},
	}, {
		name: `"matchConstraints.resourceRules has at least one explicit rule"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].RuleWithOperations = ruleWithOps([]string{"CREATE"}, nil, nil, nil)
		},
		want: []string{
			`spec.matchConstraints.resourceRules[0].apiGroups: Required value`,
			`spec.matchConstraints.resourceRules[0].apiVersions: Required value`,
			`spec.matchConstraints.resourceRules[0].resources: Required value`,
		},
	}, {
		name: `"wildcard cannot be mixed with other strings for apiGroups" and apiVersions`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].RuleWithOperations = ruleWithOps([]string{"CREATE"}, []string{"a", "*"}, []string{"a", "*", ""}, []string{"a"})
		},
		want: []string{
			`spec.matchConstraints.resourceRules[0].apiGroups: Invalid value: ["a","*"]: if '*' is present, must not specify other API groups`,
			`spec.matchConstraints.resourceRules[0].apiVersions: Invalid value: ["a","*",""]: if '*' is present, must not specify other API versions`,
			`spec.matchConstraints.resourceRules[0].apiVersions[2]: Required value`,
		},
	}, {
		name: `empty resource`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"pods", ""}
		},
		want: []string{`spec.matchConstraints.resourceRules[0].resources[1]: Required value`},
	}, {
		name: `"resource a/* cannot mix with a/x"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"a/*", "a/x"}
		},
		want: []string{`spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: "a/x": if 'a/*' is present, must not specify a/x`},
	}, {
		name: `"resource */a cannot mix with x/a"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"*/a", "x/a"}
		},
		want: []string{`spec.matchConstraints.resourceRules[0].resources[1]: Invalid value: "x/a": if '*/a' is present, must not specify x/a`},
	}, {
		name: `"resource */* cannot mix with other resources"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"*/*", "a"}
		},
		want: []string{`spec.matchConstraints.resourceRules[0].resources: Invalid value: ["*/*","a"]: if '*/*' is present, must not specify other resources`},
	}, {
		name: `"resource \"*\" cannot mix with resources that don't have subresources"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"*", "a"}
		},
		want: []string{`spec.matchConstraints.resourceRules[0].resources: Invalid value: ["*","a"]: if '*' is present, must not specify other resources without subresources`},
	}, {
		// Upstream only remembers whether the last entry without a
		// subresource was a plain resource, so this order passes.
		name: `"*" after a plain resource is accepted (upstream quirk)`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"a", "*"}
		},
	}, {
		name: `"resource \"*\" can co-exist with resources that have subresources"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"*", "a/b", "a/*", "*/b"}
		},
	}, {
		name: `"validating admission webhook scope"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConstraints.ResourceRules[0].Scope = ptrTo(admissionregistrationv1.ScopeType("Other"))
		},
		want: []string{`spec.matchConstraints.resourceRules[0].scope: Unsupported value: "Other": supported values: "*", "Cluster", "Namespaced"`},
	}, {
		name: `"matchConditions: too many" (at most 64)`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConditions = manyConditions
		},
		want: []string{`spec.matchConditions: Too many: 65: must have at most 64 items`},
	}, {
		name: "matchConditions: name and expression required",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Expression: "  "}}
		},
		want: []string{
			`spec.matchConditions[0].expression: Required value`,
			`spec.matchConditions[0].name: Required value`,
		},
	}, {
		name: "matchConditions: names are qualified names and unique",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{
				{Name: "-bad", Expression: "true"},
				{Name: "example.com/ok", Expression: "true"},
				{Name: "example.com/ok", Expression: "true"},
			}
		},
		want: []string{
			`spec.matchConditions[0].name: Invalid value: "-bad": ` + qualifiedNameMsg,
			`spec.matchConditions[2].name: Duplicate value: "example.com/ok"`,
		},
	}, {
		name: "matchConditions: expression must be bool",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: " 'a' "}}
		},
		want: []string{`spec.matchConditions[0].expression: Invalid value: "'a'": must evaluate to bool but got string`},
	}, {
		name: "matchConditions: params only with a paramKind; authorizer always",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{
				{Name: "p", Expression: "params.x == 1"},
				{Name: "a", Expression: "authorizer.requestResource.check('get').allowed()"},
			}
		},
		want: []string{"spec.matchConditions[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"},
	}, {
		name: "matchConditions: params with a paramKind",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "p", Expression: "params.x == 1"}}
		},
	}, {
		name: "matchConditions: variables are not declared even when the policy has some",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "x", Expression: "true"}}
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "v", Expression: "variables.x"}}
		},
		want: []string{"spec.matchConditions[0].expression: Invalid value: \"variables.x\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.x\n | ^"},
	}, {
		name: `"variable composition empty name"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "   ", Expression: "1 + 1"}}
		},
		want: []string{`spec.variables[0].name: Required value: name is not specified`},
	}, {
		name: `"variable composition name is not a valid identifier"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{
				{Name: "foo-bar", Expression: "1 + 1"},
				{Name: "in", Expression: "1 + 1"},
				{Name: "_ok1", Expression: "1 + 1"},
			}
		},
		want: []string{
			`spec.variables[0].name: Invalid value: "foo-bar": must be a valid CEL identifier`,
			`spec.variables[1].name: Invalid value: "in": must be a valid CEL identifier`,
		},
	}, {
		name: "program instantiation fails: an internal error in every field",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "v", Expression: "'abc'.find('[')"}}
			p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "type(1) == google.protobuf.Int64Value"}}
			p.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "'abc'.find('[') == ''", MessageExpression: "'abc'.find('[')"}}
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "k", ValueExpression: "'abc'.find('[')"}}
		},
		want: []string{
			"spec.matchConditions[0].expression: Internal error: program instantiation failed: reference to undefined type: google.protobuf.Int64Value",
			"spec.variables[0].expression: Internal error: program instantiation failed: error parsing regexp: missing closing ]: `[`",
			"spec.validations[0].expression: Internal error: program instantiation failed: error parsing regexp: missing closing ]: `[`",
			"spec.validations[0].messageExpression: Internal error: program instantiation failed: error parsing regexp: missing closing ]: `[`",
			"spec.auditAnnotations[0].valueExpression: Internal error: program instantiation failed: error parsing regexp: missing closing ]: `[`",
		},
	}, {
		name: `"variable composition cannot compile"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{
				{Name: "foo", Expression: "114 + '514'"},
				{Name: "bar", Expression: " "},
			}
		},
		want: []string{
			"spec.variables[0].expression: Invalid value: \"114 + '514'\": compilation failed: ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(int, string)'\n | 114 + '514'\n | ....^",
			`spec.variables[1].expression: Required value: expression is not specified`,
		},
	}, {
		name: "variables compose in order: a later variable is not yet visible",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{
				{Name: "a", Expression: "variables.b"},
				{Name: "b", Expression: "'s'"},
			}
			p.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "variables.b > 1"}}
		},
		want: []string{
			"spec.variables[0].expression: Invalid value: \"variables.b\": compilation failed: ERROR: <input>:1:10: undefined field 'b'\n | variables.b\n | .........^",
			"spec.validations[0].expression: Invalid value: \"variables.b > 1\": compilation failed: ERROR: <input>:1:13: found no matching overload for '_>_' applied to '(string, int)'\n | variables.b > 1\n | ............^",
		},
	}, {
		// Upstream does not check that variable names are unique (the
		// listType=map is enforced nowhere on this path); the later
		// variable's type wins.
		name: "duplicate variable names are accepted",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Variables = []admissionregistrationv1.Variable{
				{Name: "a", Expression: "'s'"},
				{Name: "a", Expression: "1"},
			}
			p.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "variables.a > 1"}}
		},
	}, {
		name: "without variables, `variables` is undeclared",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "variables.x > 1"}}
		},
		want: []string{"spec.validations[0].expression: Invalid value: \"variables.x > 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.x > 1\n | ^"},
	}, {
		name: `"Validations is required"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations = nil
			p.Spec.AuditAnnotations = nil
		},
		want: []string{
			`spec.validations: Required value: validations or auditAnnotations must contain at least one item`,
			`spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item`,
		},
	}, {
		name: `"expression is required"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations = []admissionregistrationv1.Validation{{}}
		},
		want: []string{`spec.validations[0].expression: Required value: expression is not specified`},
	}, {
		name: "validation expression must compile to bool",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations = []admissionregistrationv1.Validation{{Expression: "1"}, {Expression: "object.x <"}}
		},
		want: []string{
			`spec.validations[0].expression: Invalid value: "1": must evaluate to bool but got int`,
			"spec.validations[1].expression: Invalid value: \"object.x <\": compilation failed: ERROR: <input>:1:11: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | object.x <\n | ..........^",
		},
	}, {
		name: `"messageExpression of wrong type"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].MessageExpression = "0 == 0"
		},
		want: []string{`spec.validations[0].messageExpression: Invalid value: "0 == 0": must evaluate to string but got bool`},
	}, {
		name: "messageExpression must be non-empty if specified",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].MessageExpression = "  "
		},
		want: []string{`spec.validations[0].messageExpression: Invalid value: "  ": must be non-empty if specified`},
	}, {
		name: "messageExpression has no authorizer",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].MessageExpression = " string(authorizer.requestResource.check('get').allowed())"
		},
		want: []string{"spec.validations[0].messageExpression: Invalid value: \" string(authorizer.requestResource.check('get').allowed())\": compilation failed: ERROR: <input>:1:9: undeclared reference to 'authorizer' (in container '')\n |  string(authorizer.requestResource.check('get').allowed())\n | ........^"},
	}, {
		name: "message must be non-empty if specified",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Message = " "
		},
		want: []string{`spec.validations[0].message: Invalid value: " ": must be non-empty if specified`},
	}, {
		name: "message must not contain line breaks",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Message = "a\nb\n"
		},
		want: []string{`spec.validations[0].message: Invalid value: "a\nb\n": must not contain line breaks`},
	}, {
		name: `"Invalid Validations Reason"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Reason = ptrTo(metav1.StatusReason("other"))
		},
		want: []string{`spec.validations[0].reason: Unsupported value: "other": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"`},
	}, {
		name: "reason Unauthorized is rejected although the API documents it",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations[0].Reason = ptrTo(metav1.StatusReasonUnauthorized)
		},
		want: []string{`spec.validations[0].reason: Unsupported value: "Unauthorized": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"`},
	}, {
		name: "audit annotations alone suffice",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.Validations = nil
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "null"}}
		},
	}, {
		name: `"auditAnnotations keys must be unique"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{
				{Key: "a", ValueExpression: "'1'"},
				{Key: "a", ValueExpression: "'2'"},
			}
		},
		want: []string{`spec.auditAnnotations[1].key: Duplicate value: "a"`},
	}, {
		name: `"auditAnnotations key must be valid"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "nope!", ValueExpression: "'x'"}}
		},
		want: []string{`spec.auditAnnotations[0].key: Invalid value: "config/nope!": ` + qualifiedNameMsg},
	}, {
		name: "auditAnnotations key must keep <policy>/<key> within 63 characters",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: strings.Repeat("k", 64), ValueExpression: "'x'"}}
		},
		want: []string{`spec.auditAnnotations[0].key: Invalid value: "config/` + strings.Repeat("k", 64) + `": name part must be no more than 63 bytes`},
	}, {
		name: "auditAnnotations key requires metadata.name",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Name = ""
		},
		want: []string{
			`metadata.name: Required value: name or generateName is required`,
			`spec.auditAnnotations[0].key: Invalid value: "a": requires metadata.name be non-empty`,
		},
	}, {
		name: `"too many auditAnnotations"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = manyAnnotations
		},
		want: []string{tooMany},
	}, {
		name: `"valueExpression is required"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: " "}}
		},
		want: []string{`spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified`},
	}, {
		name: `"valueExpression must not exceed 5kb"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "'" + strings.Repeat("x", 5119) + "'"}}
		},
		want: []string{`spec.auditAnnotations[0].valueExpression: Required value: must not exceed 5120 bytes in length`},
	}, {
		name: "valueExpression of exactly 5120 bytes (after trimming) is accepted",
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "  '" + strings.Repeat("x", 5118) + "'  "}}
		},
	}, {
		name: `"valueExpression with incorrect return type"`,
		modify: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: " 1"}}
		},
		want: []string{`spec.auditAnnotations[0].valueExpression: Invalid value: " 1": must evaluate to one of [string null_type] but got int`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := validPolicy()
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "'x'"}}
			tc.modify(p)
			var got field.ErrorList
			if tc.raw {
				got = apivalidation.ValidatePolicy(exprcheck.Compiler(env), p, nil)
			} else {
				got = ValidatePolicy(env, p)
			}
			if diff := cmp.Diff(tc.want, fieldErrorStrings(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidatePolicy() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func validBinding() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "config"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        "xyzlimit-scale.example.com",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
}

// TestValidateBinding has one case per rule of upstream's
// validateValidatingAdmissionPolicyBinding; quoted names are those of
// upstream's TestValidateValidatingAdmissionPolicyBinding.
func TestValidateBinding(t *testing.T) {
	deny := ptrTo(admissionregistrationv1.DenyAction)
	tests := []struct {
		name   string
		modify func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		want   []string
	}{{
		name:   "valid",
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {},
	}, {
		name:   `"metadata.name validation"`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) { b.Name = "!!!!" },
		want:   []string{`metadata.name: Invalid value: "!!!!": ` + dns1123SubdomainMsg},
	}, {
		name:   `"PolicyName is required"`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) { b.Spec.PolicyName = "" },
		want:   []string{`spec.policyName: Required value`},
	}, {
		name:   `"Invalid PolicyName"`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) { b.Spec.PolicyName = "1++22" },
		want:   []string{`spec.policyName: Invalid value: "1++22": ` + dns1123SubdomainMsg},
	}, {
		name: "paramRef name and selector are mutually exclusive",
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "p", Selector: &metav1.LabelSelector{}, ParameterNotFoundAction: deny}
		},
		want: []string{
			`spec.paramRef.name: Forbidden: name and selector are mutually exclusive`,
			`spec.paramRef.selector: Forbidden: name and selector are mutually exclusive`,
		},
	}, {
		name: "paramRef needs name or selector, and parameterNotFoundAction",
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Namespace: "ns"}
		},
		want: []string{
			`spec.paramRef: Required value: one of name or selector must be specified`,
			`spec.paramRef.parameterNotFoundAction: Required value`,
		},
	}, {
		name: "paramRef name is a path segment name",
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "a/b", ParameterNotFoundAction: deny}
		},
		want: []string{`spec.paramRef.name: Invalid value: "a/b": may not contain '/'`},
	}, {
		name: "paramRef selector is validated strictly",
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{
				Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"a": "-"}},
				ParameterNotFoundAction: deny,
			}
		},
		want: []string{`spec.paramRef.selector.matchLabels: Invalid value: "-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
	}, {
		name: "paramRef parameterNotFoundAction must be Deny or Allow",
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ParamRef = &admissionregistrationv1.ParamRef{Name: "p", ParameterNotFoundAction: ptrTo(admissionregistrationv1.ParameterNotFoundActionType("Ignore"))}
		},
		want: []string{`spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Deny", "Allow"`},
	}, {
		name: "matchResources may have no resourceRules",
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.MatchResources = &admissionregistrationv1.MatchResources{}
		},
	}, {
		name: `matchResources errors use upstream's "matchResouces" path`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.MatchResources = &admissionregistrationv1.MatchResources{
				MatchPolicy: ptrTo(admissionregistrationv1.MatchPolicyType("other")),
				ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: ruleWithOps([]string{"CREATE"}, []string{""}, []string{"v1"}, []string{"pods"}),
					ResourceNames:      []string{"x", "x"},
				}},
			}
		},
		want: []string{
			`spec.matchResouces.matchPolicy: Unsupported value: "other": supported values: "Equivalent", "Exact"`,
			`spec.matchResouces.excludeResourceRules[0].resourceNames[1]: Duplicate value: "x"`,
		},
	}, {
		name:   `"validationActions must contain at least one item"`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) { b.Spec.ValidationActions = nil },
		want:   []string{`spec.validationActions: Required value: at least one validation action is required`},
	}, {
		name: `"validationActions must be unique"`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{"Audit", "Audit"}
		},
		want: []string{`spec.validationActions[1]: Duplicate value: "Audit"`},
	}, {
		name: `"validationActions must contain supported values"`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{"illegal"}
		},
		want: []string{`spec.validationActions[0]: Unsupported value: "illegal": supported values: "Audit", "Deny", "Warn"`},
	}, {
		name: `"validationActions must not contain both Deny and Warn"`,
		modify: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
			b.Spec.ValidationActions = []admissionregistrationv1.ValidationAction{"Deny", "Warn"}
		},
		want: []string{`spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := validBinding()
			tc.modify(b)
			if diff := cmp.Diff(tc.want, fieldErrorStrings(ValidateBinding(b)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ValidateBinding() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateNil(t *testing.T) {
	t.Parallel()
	if got := ValidatePolicy(nil, nil); len(got) != 1 || got[0].Type != field.ErrorTypeRequired {
		t.Errorf("ValidatePolicy(nil, nil) = %v, want one Required error", got)
	}
	if got := ValidateBinding(nil); len(got) != 1 || got[0].Type != field.ErrorTypeRequired {
		t.Errorf("ValidateBinding(nil) = %v, want one Required error", got)
	}
	if got := ValidatePolicy(nil, validPolicy()); len(got) != 0 {
		t.Errorf("ValidatePolicy(nil env, valid policy) = %v, want no errors", got)
	}
}

func TestValidateDoesNotModify(t *testing.T) {
	t.Parallel()
	p := validPolicy()
	ValidatePolicy(validationEnv(t, celenv.Version1_37), p)
	if p.Spec.FailurePolicy != nil || p.Spec.MatchConstraints.MatchPolicy != nil {
		t.Errorf("ValidatePolicy() defaulted its argument: %+v", p.Spec)
	}
}

// TestValidateTestdata checks that the policies and bindings of the shared
// conformance cases are ones the API server accepts, except for those that
// deliberately use configurations only upstream's plugin tests (which bypass
// API validation) can build.
func TestValidateTestdata(t *testing.T) {
	denyAndWarn := func(actions string) string {
		return `spec.validationActions: Invalid value: ` + actions + `: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`
	}
	const unauthorized = `.reason: Unsupported value: "Unauthorized": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"`
	// exceptions maps "file: kind name" to the expected errors.
	exceptions := map[string][]string{
		// Deny together with Warn: the cases reproduce upstream plugin tests
		// that show both actions acting at once.
		"actions-deny-warn-audit.yaml: binding replica-all-actions-binding":                 {denyAndWarn(`["Deny","Warn","Audit"]`)},
		"actions-warn-multiline-expression.yaml: binding multi-line-binding":                {denyAndWarn(`["Deny","Warn"]`)},
		"authorizer-checks.yaml: binding authz-policy-binding":                              {denyAndWarn(`["Deny","Warn"]`)},
		"cluster-scoped-object.yaml: binding no-cluster-admin-for-users-binding":            {denyAndWarn(`["Deny","Warn"]`)},
		"cost-per-call-limit.yaml: binding expensive-binding":                               {denyAndWarn(`["Deny","Warn"]`)},
		"cost-total-budget.yaml: binding many-expensive-binding":                            {denyAndWarn(`["Deny","Warn"]`)},
		"dry-run-and-options.yaml: binding dry-run-only-binding":                            {denyAndWarn(`["Deny","Warn"]`)},
		"failure-type-error.yaml: binding bad-compare-binding":                              {denyAndWarn(`["Deny","Warn"]`)},
		"multiple-policies-order-dependent.yaml: binding binding-a":                         {denyAndWarn(`["Deny","Warn"]`)},
		"multiple-policies-order-dependent.yaml: binding binding-b":                         {denyAndWarn(`["Deny","Warn"]`)},
		"multiple-policies-order-dependent.yaml: binding binding-c":                         {denyAndWarn(`["Deny","Warn"]`)},
		"params-by-selector-order-dependent.yaml: binding replicalimit-binding.example.com": {denyAndWarn(`["Deny","Warn","Audit"]`)},
		"params-by-selector.yaml: binding replicalimit-binding.example.com":                 {denyAndWarn(`["Deny","Warn"]`)},
		"params-configmap.yaml: binding configmap-limits-binding":                           {denyAndWarn(`["Deny","Warn"]`)},
		"params-multiple-bindings.yaml: binding strict-binding":                             {denyAndWarn(`["Deny","Warn"]`)},
		"userinfo.yaml: binding user-checks-binding":                                        {denyAndWarn(`["Deny","Warn"]`)},
		// reason Unauthorized: the cases show the 401 code the dispatcher
		// would give, which the API's validation never lets through.
		"reason-first-denial-wins.yaml: policy replicas-max": {`spec.validations[1]` + unauthorized},
		"reason-unauthorized.yaml: policy replicas-max":      {`spec.validations[0]` + unauthorized},
		// A generated case (conformance/gen seed 9615): the generator, like
		// upstream's plugin tests, builds policies API validation refuses.
		"params-kind-unknown-binding-unselected.yaml: policy policy-a": {`spec.validations[1]` + unauthorized},
		"params-kind-unknown-binding-unselected.yaml: policy policy-b": {`spec.auditAnnotations[0].valueExpression: Invalid value: "1": must evaluate to one of [string null_type] but got int`},
		"params-kind-unknown-binding-unselected.yaml: policy policy-c": {`spec.validations[0].message: Invalid value: "needs\nreview": must not contain line breaks`},
	}
	files, err := filepath.Glob("../policy/testdata/cases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test cases found: %v", err)
	}
	env := validationEnv(t, celenv.Version1_37)
	seen := map[string]bool{}
	check := func(t *testing.T, key string, got field.ErrorList) {
		t.Helper()
		seen[key] = true
		if diff := cmp.Diff(exceptions[key], fieldErrorStrings(got), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: validation mismatch (-want +got):\n%s", key, diff)
		}
	}
	for _, f := range files {
		m, err := manifest.LoadFiles(f)
		if err != nil {
			t.Fatalf("manifest.LoadFiles(%s) error: %v", f, err)
		}
		base := filepath.Base(f)
		for _, p := range m.Policies {
			check(t, base+": policy "+p.Name, ValidatePolicy(env, p))
		}
		for _, b := range m.Bindings {
			check(t, base+": binding "+b.Name, ValidateBinding(b))
		}
	}
	for key := range exceptions {
		if !seen[key] {
			t.Errorf("exception %q matches no policy or binding", key)
		}
	}
}

// TestVersionGating shows that new expressions are held to the previous
// version's libraries: `includes` (Lists v1) arrived in 1.37, so a 1.37
// server rejects it in a new policy but keeps accepting it where it is
// already stored, and a 1.38 server (n-1 = 1.37) would accept it anew.
func TestVersionGating(t *testing.T) {
	env := validationEnv(t, celenv.Version1_37)
	const expr = "[1, 2].includes(1)"
	withIncludes := func() *admissionregistrationv1.ValidatingAdmissionPolicy {
		p := validPolicy()
		p.Spec.Validations = []admissionregistrationv1.Validation{{Expression: expr}}
		return p
	}
	scope := env.NewScope(celenv.ScopeOptions{CheckOnly: true, NoVariables: true})
	if err := scope.Compile(expr, celenv.Decls{Authorizer: true}, cel.BoolType).Err(); err != nil {
		t.Errorf("StoredExpressions Check(%q) = %v, want nil", expr, err)
	}
	if err := scope.WithMode(celenv.NewExpressions).Compile(expr, celenv.Decls{Authorizer: true}, cel.BoolType).Err(); err == nil {
		t.Errorf("NewExpressions Check(%q) = nil, want an error", expr)
	}

	want := []string{"spec.validations[0].expression: Invalid value: \"[1, 2].includes(1)\": compilation failed: ERROR: <input>:1:16: undeclared reference to 'includes' (in container '')\n | [1, 2].includes(1)\n | ...............^"}
	if diff := cmp.Diff(want, fieldErrorStrings(ValidatePolicy(env, withIncludes()))); diff != "" {
		t.Errorf("ValidatePolicy() mismatch (-want +got):\n%s", diff)
	}
	// An update that keeps the expression compiles it as stored.
	if got := ValidatePolicyUpdate(env, withIncludes(), withIncludes()); len(got) != 0 {
		t.Errorf("ValidatePolicyUpdate(unchanged) = %v, want no errors", got)
	}
	// An update that introduces it does not.
	if diff := cmp.Diff(want, fieldErrorStrings(ValidatePolicyUpdate(env, withIncludes(), validPolicy()))); diff != "" {
		t.Errorf("ValidatePolicyUpdate(new expression) mismatch (-want +got):\n%s", diff)
	}
}

// TestValidatePolicyUpdate covers the update rules besides version gating.
func TestValidatePolicyUpdate(t *testing.T) {
	env := validationEnv(t, celenv.Version1_37)
	const includes = "[1, 2].includes(1)"
	badCondition := func() *admissionregistrationv1.ValidatingAdmissionPolicy {
		p := validPolicy()
		p.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "m", Expression: "variables.x"}}
		return p
	}
	tests := []struct {
		name    string
		p, old  func() *admissionregistrationv1.ValidatingAdmissionPolicy
		wantErr int
	}{{
		name: "unchanged match conditions and paramKind are not validated",
		p:    badCondition, old: badCondition,
	}, {
		name: "changed paramKind revalidates match conditions",
		p: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
			p := badCondition()
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
			return p
		},
		old:     badCondition,
		wantErr: 1,
	}, {
		// Upstream looks variables up among the old validation expressions.
		name: "a variable is stored when an old validation had its text",
		p: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
			p := validPolicy()
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "v", Expression: includes}}
			return p
		},
		old: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
			p := validPolicy()
			p.Spec.Validations = append(p.Spec.Validations, admissionregistrationv1.Validation{Expression: includes})
			return p
		},
	}, {
		name: "a variable is new when only an old variable had its text",
		p: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
			p := validPolicy()
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "v", Expression: includes}}
			return p
		},
		old: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
			p := validPolicy()
			p.Spec.Variables = []admissionregistrationv1.Variable{{Name: "v", Expression: includes}}
			return p
		},
		wantErr: 1,
	}, {
		name: "message and audit expressions are compared with their own kind",
		p: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
			p := validPolicy()
			p.Spec.Validations[0].MessageExpression = "string(" + includes + ")"
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "a", ValueExpression: "string(" + includes + ")"}}
			return p
		},
		old: func() *admissionregistrationv1.ValidatingAdmissionPolicy {
			p := validPolicy()
			p.Spec.Validations[0].MessageExpression = "string(" + includes + ")"
			p.Spec.AuditAnnotations = []admissionregistrationv1.AuditAnnotation{{Key: "b", ValueExpression: "string(" + includes + ")"}}
			return p
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ValidatePolicyUpdate(env, tc.p(), tc.old()); len(got) != tc.wantErr {
				t.Errorf("ValidatePolicyUpdate() = %v, want %d errors", got, tc.wantErr)
			}
		})
	}
}
