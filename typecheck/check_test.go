package typecheck_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

var deployments = &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
	RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
		APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"},
	}},
}}}

func newEnv(t testing.TB) *celenv.Env {
	t.Helper()
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatalf("celenv.New() = %v", err)
	}
	return env
}

func objectSchema(props map[string]spec.Schema) *spec.Schema {
	return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: props}}
}

// anySchema resolves every kind to s (nil: not found), like upstream's
// fake resolver.
func anySchema(s *spec.Schema) typecheck.SchemaResolver {
	return typecheck.SchemaResolverFunc(func(gvk schema.GroupVersionKind) (*spec.Schema, error) {
		if s == nil {
			return nil, fmt.Errorf("cannot resolve %v: %w", gvk, typecheck.ErrSchemaNotFound)
		}
		return s, nil
	})
}

func vap(validations []admissionregistrationv1.Validation, mutate ...func(*admissionregistrationv1.ValidatingAdmissionPolicySpec)) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: deployments, Validations: validations,
	}}
	for _, m := range mutate {
		m(&p.Spec)
	}
	return p
}

func expr(e string) []admissionregistrationv1.Validation {
	return []admissionregistrationv1.Validation{{Expression: e}}
}

// TestCheckUpstreamTable follows the cases of upstream's TestTypeCheck.
func TestCheckUpstreamTable(t *testing.T) {
	env := newEnv(t)
	fooString := objectSchema(map[string]spec.Schema{"foo": *spec.StringProperty()})
	fooInt := objectSchema(map[string]spec.Schema{"foo": *spec.Int64Property()})
	withParams := func(kind string) func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		return func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: kind}
		}
	}
	withVars := func(vs ...string) func(*admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		return func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			for i := 0; i+1 < len(vs); i += 2 {
				s.Variables = append(s.Variables, admissionregistrationv1.Variable{Name: vs[i], Expression: vs[i+1]})
			}
		}
	}
	tests := []struct {
		name      string
		schema    *spec.Schema
		policy    *admissionregistrationv1.ValidatingAdmissionPolicy
		fieldRefs []string
		contains  string
	}{
		{name: "empty", policy: &admissionregistrationv1.ValidatingAdmissionPolicy{}},
		{name: "unresolved schema", policy: vap(expr("object.foo == 'bar'"))},
		{name: "passed check", schema: fooString, policy: vap(expr("object.foo == 'bar'"))},
		{name: "undefined field", schema: objectSchema(map[string]spec.Schema{"bar": *spec.StringProperty()}), policy: vap(expr("object.foo == 'bar'")),
			fieldRefs: []string{"spec.validations[0].expression"}, contains: "undefined field 'foo'"},
		{name: "field type mismatch", schema: fooInt, policy: vap(expr("object.foo == 'bar'")),
			fieldRefs: []string{"spec.validations[0].expression"}, contains: "found no matching overload"},
		{name: "params", schema: fooString, policy: vap(expr("object.foo == params.bar"), withParams("DoesNotMatter")),
			fieldRefs: []string{"spec.validations[0].expression"}, contains: "undefined field 'bar'"},
		{name: "params with untyped schema", schema: &spec.Schema{}, policy: vap(expr("params != null"), withParams("Config"))},
		{name: "multiple expressions", schema: fooString, policy: vap([]admissionregistrationv1.Validation{{Expression: "object.foo == 'bar'"}, {Expression: "object.bar == 'foo'"}}),
			fieldRefs: []string{"spec.validations[1].expression"}},
		{name: "message expressions", schema: fooString, policy: vap([]admissionregistrationv1.Validation{{Expression: "object.foo == 'bar'", MessageExpression: "object.foo + 114514"}}),
			fieldRefs: []string{"spec.validations[0].messageExpression"}},
		{name: "authorizer", schema: fooString, policy: vap(expr("authorizer.group('').resource('endpoints').check('create').allowed()"))},
		{name: "authorizer invalid", schema: fooString, policy: vap(expr("authorizer.allowed()")),
			fieldRefs: []string{"spec.validations[0].expression"}, contains: "found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer"},
		{name: "authorizer.requestResource is not declared", schema: fooString, policy: vap(expr("authorizer.requestResource.check('get').allowed()")),
			fieldRefs: []string{"spec.validations[0].expression"}, contains: "ERROR: <input>:1:11: unexpected failed resolution of 'kubernetes.authorization.Authorizer'"},
		{name: "additionalProperties true", schema: objectSchema(map[string]spec.Schema{
			"spec":   *objectSchema(map[string]spec.Schema{"text": *spec.StringProperty()}),
			"status": *objectSchema(map[string]spec.Schema{"p": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, AdditionalProperties: &spec.SchemaOrBool{Allows: true}}}}),
		}), policy: vap(expr("has(object.spec.text)"))},
		{name: "schema without type", schema: &spec.Schema{}, policy: vap(expr("true"))},
		{name: "variables valid", schema: fooInt, policy: vap(expr("variables.works"), withVars("works", "true"))},
		{name: "variables missing field", schema: fooInt, policy: vap(expr("variables.nonExisting"), withVars("works", "true")),
			fieldRefs: []string{"spec.validations[0].expression"}, contains: "undefined field 'nonExisting'"},
		{name: "variables field wrong type", schema: fooInt, policy: vap(expr("variables.name == object.foo"), withVars("name", "'something'")),
			fieldRefs: []string{"spec.validations[0].expression"}, contains: "found no matching overload for '_==_' applied to '(string, int)"},
		{name: "error in variables not reported", schema: fooInt, policy: vap(expr("variables.name == object.foo"), withVars("name", "object.foo == 'str'"))},
		{name: "later variable sees earlier", schema: fooInt, policy: vap(expr("variables.b > 1"), withVars("a", "object.foo", "b", "variables.a"))},
		{name: "forward reference", schema: fooInt, policy: vap(expr("variables.a"), withVars("a", "variables.b", "b", "1")),
			fieldRefs: nil},
		{name: "result type not enforced", schema: fooString, policy: vap(expr("object.foo"))},
		{name: "invalid paramKind apiVersion leaves params undeclared", schema: fooString, policy: vap(expr("params == null"), func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "a/b/c", Kind: "X"}
		}), fieldRefs: []string{"spec.validations[0].expression"}, contains: "undeclared reference to 'params'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := check(t, typecheck.Options{Env: env, Schemas: anySchema(tc.schema)}, tc.policy)
			var refs []string
			for _, w := range got {
				refs = append(refs, w.FieldRef)
				if !strings.Contains(w.Warning, tc.contains) {
					t.Errorf("Check() warning %q does not contain %q", w.Warning, tc.contains)
				}
			}
			if diff := cmp.Diff(tc.fieldRefs, refs); diff != "" {
				t.Errorf("Check() fieldRefs mismatch (-want +got):\n%s\nwarnings: %v", diff, got)
			}
		})
	}
}

// TestCheckDocExamples reproduces the documented status of the seeds: one
// kind and two kinds, with the embedded built-in schemas.
func TestCheckDocExamples(t *testing.T) {
	env := newEnv(t)
	one := vap(expr("object.replicas > 1"))
	two := vap(expr("object.replicas > 1"), func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
		s.MatchConstraints = deployments.DeepCopy()
		s.MatchConstraints.ResourceRules = append(s.MatchConstraints.ResourceRules, admissionregistrationv1.NamedRuleWithOperations{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
				APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
			}},
		})
	})
	const caret = " | object.replicas > 1\n | ......^\n"
	tests := []struct {
		name   string
		policy *admissionregistrationv1.ValidatingAdmissionPolicy
		want   []admissionregistrationv1.ExpressionWarning
	}{
		{name: "one type", policy: one, want: []admissionregistrationv1.ExpressionWarning{{
			FieldRef: "spec.validations[0].expression",
			Warning:  "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n" + caret,
		}}},
		{name: "two types", policy: two, want: []admissionregistrationv1.ExpressionWarning{{
			FieldRef: "spec.validations[0].expression",
			Warning: "/v1, Kind=Pod: ERROR: <input>:1:7: undefined field 'replicas'\n" + caret + "\n" +
				"apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n" + caret,
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := check(t, typecheck.Options{Env: env, Schemas: typecheck.BuiltinResolver()}, tc.policy)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckBuiltinSchemas checks typed-mode rules against the embedded
// schemas. The expected texts were compared with upstream's type checker.
func TestCheckBuiltinSchemas(t *testing.T) {
	env := newEnv(t)
	checker, err := typecheck.NewChecker(typecheck.Options{Env: env})
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	tests := []struct {
		name string
		expr string
		want string // "" for no warning
	}{
		{name: "spec.replicas", expr: "object.spec.replicas > 1"},
		{name: "oldObject is typed too", expr: "oldObject.spec.nope", want: "undefined field 'nope'"},
		{name: "namespace needs no escape", expr: "object.metadata.namespace == object.metadata.__namespace__"},
		{name: "full ObjectMeta", expr: "object.metadata.uid != '' && object.metadata.managedFields.size() > 0 && object.metadata.creationTimestamp < timestamp('2000-01-01T00:00:00Z')"},
		{name: "list element type name", expr: "object.spec.template.spec.containers[0] == 1",
			want: "found no matching overload for '_==_' applied to '(Deployment.spec.template.spec.containers.@idx, int)'"},
		{name: "list element fields", expr: "object.spec.template.spec.containers.all(c, c.image != '' && c.nope)", want: "undefined field 'nope'"},
		{name: "quantity is untyped", expr: "object.spec.template.spec.containers[0].resources.limits.cpu == '1'", want: "undefined field 'limits'"},
		{name: "int-or-string is dyn", expr: "object.spec.strategy.rollingUpdate.maxSurge == 1 || object.spec.strategy.rollingUpdate.maxSurge == '25%'"},
		{name: "map of strings", expr: "object.metadata.labels == 1", want: "'(map(string, string), int)'"},
		{name: "request typed", expr: "request.namespace == 1", want: "'(string, int)'"},
		{name: "namespaceObject typed", expr: "namespaceObject.metadata.nope", want: "undefined field 'nope'"},
		{name: "syntax error", expr: "1 +", want: "Syntax error"},
		{name: "newest libraries", expr: "object.metadata.name.matches('a') && isSemver('1.0.0') && [1,2].distinct().size() == 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checker.Check(vap(expr(tc.expr))).Warnings
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("Check(%q) = %v, want none", tc.expr, got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Warning, tc.want)):
				t.Errorf("Check(%q) = %v, want a warning containing %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestCheckParams(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name  string
		param *admissionregistrationv1.ParamKind
		expr  string
		want  string
	}{
		{name: "configmap data", param: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, expr: "params.data.x == 'y'"},
		{name: "configmap undefined", param: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, expr: "params.spec", want: "undefined field 'spec'"},
		{name: "unknown param kind is dyn", param: &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Config"}, expr: "params.anything.goes"},
		{name: "same kind as object", param: &admissionregistrationv1.ParamKind{APIVersion: "apps/v1", Kind: "Deployment"}, expr: "params.spec == 1",
			want: "'(Deployment.spec, int)'"},
		{name: "same kind name, other group", param: &admissionregistrationv1.ParamKind{APIVersion: "apps/v1beta1", Kind: "Deployment"}, expr: "params.spec == object.spec",
			want: "'(DeploymentParams.spec, Deployment.spec)'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := vap(expr(tc.expr), func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) { s.ParamKind = tc.param })
			got := check(t, typecheck.Options{Env: env}, p)
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("Check(%q) = %v, want none", tc.expr, got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Warning, tc.want)):
				t.Errorf("Check(%q) = %v, want a warning containing %q", tc.expr, got, tc.want)
			}
		})
	}
}

const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
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
              x-kubernetes-name: {type: string}
              port: {x-kubernetes-int-or-string: true}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  known: {type: string}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object}
  - name: v2
    served: false
    storage: false
`

func loadCRD(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("yaml.Unmarshal() = %v", err)
	}
	return u
}

func TestCRDResolver(t *testing.T) {
	r, err := typecheck.NewCRDResolver(loadCRD(t, widgetCRD))
	if err != nil {
		t.Fatalf("NewCRDResolver() = %v", err)
	}
	tests := []struct {
		gvk      schema.GroupVersionKind
		notFound bool
	}{
		{gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}},
		{gvk: schema.GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"}, notFound: true},
		{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, notFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.gvk.String(), func(t *testing.T) {
			s, err := r.ResolveSchema(tc.gvk)
			if tc.notFound {
				if !errors.Is(err, typecheck.ErrSchemaNotFound) {
					t.Errorf("ResolveSchema(%v) error = %v, want ErrSchemaNotFound", tc.gvk, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveSchema(%v) = %v", tc.gvk, err)
			}
			if _, ok := s.Properties["metadata"].Properties["managedFields"]; !ok {
				t.Errorf("ResolveSchema(%v).metadata lacks managedFields; want full ObjectMeta", tc.gvk)
			}
		})
	}
	if _, err := typecheck.NewCRDResolver(loadCRD(t, "apiVersion: v1\nkind: ConfigMap\n")); err == nil {
		t.Errorf("NewCRDResolver(ConfigMap) = nil error, want one")
	}
}

func TestCheckExtended(t *testing.T) {
	env := newEnv(t)
	crd := loadCRD(t, widgetCRD)
	rules := func(groups, resources []string) *admissionregistrationv1.MatchResources {
		return &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{
				APIGroups: groups, APIVersions: []string{"v1"}, Resources: resources,
			}},
		}}}
	}
	widgets := rules([]string{"example.com"}, []string{"widgets"})
	both := rules([]string{"example.com", "apps"}, []string{"widgets", "deployments"})
	tests := []struct {
		name         string
		expr         string
		param        *admissionregistrationv1.ParamKind
		both         bool
		wantUpstream []string // warnings per expression, "" for none
		wantExtended []string
	}{
		{name: "typed custom kind", expr: "object.spec.size > 1 && object.spec.x__dash__kubernetes__dash__name != '' && object.metadata.uid != ''"},
		{name: "undefined field in custom kind", expr: "object.spec.sise > 1",
			wantExtended: []string{"example.com/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'sise'"}},
		{name: "preserve-unknown-fields declares only known fields", expr: "has(object.spec.extra) && object.spec.extra.known == '' && object.spec.extra.other == 1",
			wantExtended: []string{"example.com/v1, Kind=Widget: ERROR: <input>:1:77: undefined field 'other'"}},
		{name: "built-in kinds stay upstream-equal", expr: "object.spec.sise > 1", both: true,
			wantUpstream: []string{"apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'sise'"},
			wantExtended: []string{"example.com/v1, Kind=Widget: ERROR: <input>:1:12: undefined field 'sise'"}},
		{name: "embedded resource", expr: "object.spec.template.metadata.name == '' && object.spec.template.apiVersion == ''"},
		{name: "embedded resource metadata is minimal", expr: "object.spec.template.metadata.uid == ''",
			wantExtended: []string{"example.com/v1, Kind=Widget: ERROR: <input>:1:30: undefined field 'uid'"}},
		{name: "int-or-string", expr: "object.spec.port == 1 || object.spec.port == 'http'"},
		{name: "custom params", expr: "params.spec.size == 1 && params.spec.nope == 1", param: &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Widget"}, both: true,
			wantExtended: []string{"apps/v1, Kind=Deployment: ERROR: <input>:1:37: undefined field 'nope'\n | params.spec.size == 1 && params.spec.nope == 1\n | ....................................^\n\nexample.com/v1, Kind=Widget: ERROR: <input>:1:37: undefined field 'nope'"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := vap(expr(tc.expr), func(s *admissionregistrationv1.ValidatingAdmissionPolicySpec) {
				s.MatchConstraints = widgets
				if tc.both {
					s.MatchConstraints = both
				}
				s.ParamKind = tc.param
			})
			checker, err := typecheck.NewChecker(typecheck.Options{Env: env, CRDs: []*unstructured.Unstructured{crd}})
			if err != nil {
				t.Fatalf("NewChecker() = %v", err)
			}
			res := checker.Check(p)
			check := func(what string, got []admissionregistrationv1.ExpressionWarning, want []string) {
				if len(got) != len(want) {
					t.Fatalf("Check() %s = %v, want %d warnings %q", what, got, len(want), want)
				}
				for i := range want {
					if !strings.HasPrefix(got[i].Warning, want[i]) {
						t.Errorf("Check() %s[%d] = %q, want prefix %q", what, i, got[i].Warning, want[i])
					}
				}
			}
			check("Warnings", res.Warnings, tc.wantUpstream)
			check("Extended", res.Extended, tc.wantExtended)
		})
	}
}

// TestCheckTestdata type-checks every policy of the shared cases with the
// built-in schemas: nothing may panic, and warnings must be well formed.
func TestCheckTestdata(t *testing.T) {
	files, err := filepath.Glob("../policy/testdata/cases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test cases found: %v", err)
	}
	env := newEnv(t)
	checker, err := typecheck.NewChecker(typecheck.Options{Env: env})
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	policies := 0
	for i, f := range files {
		// -short checks every fourth case; CI checks them all.
		if testing.Short() && i%4 != 0 {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := manifest.Decode(data, f)
		if err != nil {
			continue // cases about malformed input
		}
		var crds []*unstructured.Unstructured
		for _, d := range docs {
			if u, ok := d.Object.(*unstructured.Unstructured); ok && u.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, u)
			}
		}
		for _, d := range docs {
			p, ok := d.Object.(*admissionregistrationv1.ValidatingAdmissionPolicy)
			if !ok {
				continue
			}
			policies++
			for _, w := range checker.Check(p).Warnings {
				if !strings.HasPrefix(w.FieldRef, "spec.validations[") || !strings.HasSuffix(w.Warning, "\n") {
					t.Errorf("%s: %s: malformed warning %+v", f, p.Name, w)
				}
			}
			if len(crds) == 0 {
				continue
			}
			ext, err := typecheck.NewChecker(typecheck.Options{Env: env, CRDs: crds})
			if err != nil {
				t.Errorf("%s: NewChecker(CRDs) = %v", f, err)
				continue
			}
			for _, w := range ext.Check(p).Extended {
				if !strings.HasPrefix(w.FieldRef, "spec.validations[") || !strings.HasSuffix(w.Warning, "\n") {
					t.Errorf("%s: %s: malformed extended warning %+v", f, p.Name, w)
				}
			}
		}
	}
	if policies == 0 {
		t.Errorf("no policies checked")
	}
}

func TestCheckNil(t *testing.T) {
	checker, err := typecheck.NewChecker(typecheck.Options{})
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	if got := checker.Check(nil); got.Warnings != nil || got.Extended != nil {
		t.Errorf("Check(nil) = %v, want the zero Result", got)
	}
	if got := checker.Unchecked(nil); got != nil {
		t.Errorf("Unchecked(nil) = %v, want nil", got)
	}
}

// TestNewCheckerOptions checks that the resources come from Resources or
// CRDs, never both, and that malformed CRDs are refused.
func TestNewCheckerOptions(t *testing.T) {
	crd := loadCRD(t, widgetCRD)
	mapper, err := manifest.NewResourceMapper()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    typecheck.Options
		wantErr string // "" for success
	}{
		{name: "zero", opts: typecheck.Options{}},
		{name: "resources", opts: typecheck.Options{Resources: mapper}},
		{name: "crds", opts: typecheck.Options{CRDs: []*unstructured.Unstructured{crd}}},
		{name: "both", opts: typecheck.Options{Resources: mapper, CRDs: []*unstructured.Unstructured{crd}},
			wantErr: "typecheck: set Options.Resources or Options.CRDs, not both"},
		{name: "nil crd", opts: typecheck.Options{CRDs: []*unstructured.Unstructured{nil}}, wantErr: "must not be nil"},
		{name: "crd twice", opts: typecheck.Options{CRDs: []*unstructured.Unstructured{crd, crd}}, wantErr: "defined twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := typecheck.NewChecker(tc.opts)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("NewChecker() = %v, want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("NewChecker() = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

// check type-checks p with a checker built from opts and returns the
// upstream-equal warnings.
func check(t *testing.T, opts typecheck.Options, p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	t.Helper()
	c, err := typecheck.NewChecker(opts)
	if err != nil {
		t.Fatalf("NewChecker() = %v", err)
	}
	return c.Check(p).Warnings
}
