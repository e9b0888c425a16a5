package upstream_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/conformance/upstream"
	"github.com/vapkit/vapkit/policy/casefile"
)

func TestParseCaseErrors(t *testing.T) {
	review := "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: {uid: x, operation: CREATE}\n"
	tests := []struct {
		name, data, wantErr string
	}{
		{name: "no request", data: "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n", wantErr: "no admission.k8s.io/v1 AdmissionReview"},
		{name: "no kind", data: "apiVersion: v1\n---\n" + review, wantErr: "no apiVersion or kind"},
		{name: "unknown policy field", data: "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec: {bogus: 1}\n---\n" + review, wantErr: "bogus"},
		{name: "bad decision", data: "apiVersion: vapkit.dev/v1alpha1\nkind: AuthorizerRules\nrules: [{decision: Maybe}]\n---\n" + review, wantErr: "invalid authorization decision"},
		{name: "two reviews", data: review + "---\n" + review, wantErr: "more than one AdmissionReview"},
		{name: "crd scope", data: "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: {group: g, names: {kind: K, plural: ks}, scope: Galaxy, versions: [{name: v1, served: true}]}\n---\n" + review, wantErr: "spec.scope"},
		{name: "param without name", data: "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\n" + review, wantErr: "no metadata.name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := upstream.ParseCase([]byte(tc.data), tc.name)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseCase(%s) error = %v, want it to contain %q", tc.name, err, tc.wantErr)
			}
		})
	}
}

func TestParseCaseDefaults(t *testing.T) {
	data := `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: p}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations: [{expression: "true"}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
---
apiVersion: x.example.com/v1
kind: Orphan
metadata: {name: o}
---
apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request: {uid: u, operation: DELETE, kind: {version: v1, kind: Pod}, resource: {version: v1, resource: pods}}
`
	c, err := upstream.ParseCase([]byte(data), "defaults")
	if err != nil {
		t.Fatal(err)
	}
	p := c.Policies[0]
	tests := []struct {
		name      string
		got, want any
	}{
		{"failurePolicy", string(*p.Spec.FailurePolicy), "Fail"},
		{"matchPolicy", string(*p.Spec.MatchConstraints.MatchPolicy), "Equivalent"},
		{"scope", string(*p.Spec.MatchConstraints.ResourceRules[0].Scope), "*"},
		{"namespaceSelector", p.Spec.MatchConstraints.NamespaceSelector != nil, true},
		{"params", len(c.Params), 1},
		{"param namespace", c.Params[0].(interface{ GetNamespace() string }).GetNamespace(), "default"},
		{"options kind", c.Options.GetObjectKind().GroupVersionKind().Kind, "DeleteOptions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
			}
		})
	}
}

func TestRulesAuthorizer(t *testing.T) {
	a, err := upstream.NewRulesAuthorizer(casefile.RuleAuthorizer{
		{User: "bob", Verb: "update", APIGroup: "apps", Resource: "deployments", Decision: authz.Allow, Reason: "bob"},
		{Groups: []string{"ops"}, Path: "/metrics*", Decision: authz.Allow},
		{Resource: "secrets", Decision: authz.NoOpinion, Error: "down"},
		{Resource: "secrets", Decision: authz.Deny},
	})
	if err != nil {
		t.Fatal(err)
	}
	bob := &user.DefaultInfo{Name: "bob", Groups: []string{"ops"}}
	tests := []struct {
		name       string
		attrs      authorizer.AttributesRecord
		want       authorizer.Decision
		wantReason string
		wantErr    error
	}{
		{"resource allow", authorizer.AttributesRecord{User: bob, Verb: "update", APIGroup: "apps", Resource: "deployments", ResourceRequest: true}, authorizer.DecisionAllow, "bob", nil},
		{"other user", authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "eve"}, Verb: "update", APIGroup: "apps", Resource: "deployments", ResourceRequest: true}, authorizer.DecisionNoOpinion, "", nil},
		{"path prefix", authorizer.AttributesRecord{User: bob, Verb: "get", Path: "/metrics/x"}, authorizer.DecisionAllow, "", nil},
		{"path needs non-resource", authorizer.AttributesRecord{User: bob, Verb: "get", Path: "/metrics", ResourceRequest: true}, authorizer.DecisionNoOpinion, "", nil},
		{"error", authorizer.AttributesRecord{User: bob, Verb: "get", Resource: "secrets", ResourceRequest: true}, authorizer.DecisionNoOpinion, "", errors.New("down")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := a.Authorize(context.Background(), tc.attrs)
			if d != tc.want || reason != tc.wantReason || !reflect.DeepEqual(err, tc.wantErr) {
				t.Errorf("Authorize(%s) = %v, %q, %v, want %v, %q, %v", tc.name, d, reason, err, tc.want, tc.wantReason, tc.wantErr)
			}
		})
	}
}

func TestOrderings(t *testing.T) {
	policy := func(name string) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata: {name: " + name + "}\nspec: {validations: [{expression: 'true'}]}\n---\n"
	}
	binding := func(name, policy string) string {
		return "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: " + name + "}\nspec: {policyName: " + policy + ", validationActions: [Deny]}\n---\n"
	}
	review := "apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest: {uid: u, operation: CREATE}\n"
	data := policy("a") + policy("b") + policy("c") + policy("unbound") +
		binding("a1", "a") + binding("a2", "a") + binding("b1", "b") + binding("c1", "c") + binding("x", "missing") + review
	c, err := upstream.ParseCase([]byte(data), "orderings")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		max           int
		wantLen       int
		wantExhaustve bool
	}{
		{"all", 100, 12, true},
		{"exact", 12, 12, true},
		{"sampled", 5, 5, false},
		{"one", 0, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orders, exhaustive := upstream.Orderings(c, tc.max)
			if len(orders) != tc.wantLen || exhaustive != tc.wantExhaustve {
				t.Fatalf("Orderings(max=%d) = %d orders (exhaustive %v), want %d (%v)", tc.max, len(orders), exhaustive, tc.wantLen, tc.wantExhaustve)
			}
			first := upstream.Ordering{Policies: []string{"a", "b", "c"}, Bindings: []string{"a1", "a2"}}
			if !reflect.DeepEqual(orders[0], first) {
				t.Errorf("Orderings(max=%d)[0] = %+v, want %+v", tc.max, orders[0], first)
			}
			again, _ := upstream.Orderings(c, tc.max)
			if !reflect.DeepEqual(orders, again) {
				t.Errorf("Orderings(max=%d) is not deterministic", tc.max)
			}
		})
	}
}
