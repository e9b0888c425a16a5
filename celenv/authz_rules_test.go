package celenv_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/celenv/authz"
)

// authorizerRulesDoc is the vapkit.dev/v1alpha1 AuthorizerRules document.
type authorizerRulesDoc struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Rules      celenv.RuleAuthorizer `json:"rules"`
}

func mustRules(t *testing.T, doc string) celenv.RuleAuthorizer {
	t.Helper()
	var d authorizerRulesDoc
	if err := yaml.UnmarshalStrict([]byte(doc), &d); err != nil {
		t.Fatalf("yaml.UnmarshalStrict() = %v", err)
	}
	return d.Rules
}

func TestRuleAuthorizerDecode(t *testing.T) {
	// The example of the conformance README.
	got := mustRules(t, `
apiVersion: vapkit.dev/v1alpha1
kind: AuthorizerRules
rules:
- {user: bob, groups: [devs], verb: update, apiGroup: apps, apiVersion: v1,
   resource: deployments, subresource: scale, namespace: team-a, name: web,
   decision: Allow, reason: "because"}
- {path: "/metrics", verb: get, decision: Allow}     # non-resource check
- {resource: secrets, decision: NoOpinion, error: "authorizer down"}
- {resource: configmaps}
`)
	want := celenv.RuleAuthorizer{
		{User: "bob", Groups: []string{"devs"}, Verb: "update", APIGroup: "apps", APIVersion: "v1",
			Resource: "deployments", Subresource: "scale", Namespace: "team-a", Name: "web",
			Decision: authz.Allow, Reason: "because"},
		{Path: "/metrics", Verb: "get", Decision: authz.Allow},
		{Resource: "secrets", Decision: authz.NoOpinion, Error: "authorizer down"},
		{Resource: "configmaps", Decision: authz.Deny},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded rules mismatch (-want +got):\n%s", diff)
	}

	// Round trip.
	b, err := yaml.Marshal(authorizerRulesDoc{Rules: want})
	if err != nil {
		t.Fatalf("yaml.Marshal() = %v", err)
	}
	if back := mustRules(t, string(b)); !cmp.Equal(want, back) {
		t.Errorf("round trip = %+v, want %+v", back, want)
	}

	var d authorizerRulesDoc
	if err := yaml.Unmarshal([]byte("rules: [{decision: allow}]"), &d); err == nil || !strings.Contains(err.Error(), "invalid authorization decision") {
		t.Errorf("yaml.Unmarshal(decision: allow) = %v, want an invalid decision error", err)
	}
}

func TestRuleAuthorizer(t *testing.T) {
	bob := authenticationv1.UserInfo{Username: "bob", Groups: []string{"devs", "system:authenticated"}}
	res := func(user authenticationv1.UserInfo, verb, group, version, resource, sub, ns, name string) authz.Attributes {
		return authz.Attributes{User: user, Verb: verb, ResourceRequest: true, APIGroup: group, APIVersion: version,
			Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	path := func(user authenticationv1.UserInfo, verb, p string) authz.Attributes {
		return authz.Attributes{User: user, Verb: verb, Path: p}
	}
	allow := authz.Allow
	deny := authz.Deny
	none := authz.NoOpinion

	tests := []struct {
		name  string
		rules celenv.RuleAuthorizer
		attrs authz.Attributes
		want  string // decision/reason/error
	}{
		{"no rules", nil, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"no match", celenv.RuleAuthorizer{{User: "ann", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"empty rule matches anything", celenv.RuleAuthorizer{{Decision: allow, Reason: "r"}}, path(bob, "get", "/x"), "Allow/r/<nil>"},
		{"empty rule matches resources", celenv.RuleAuthorizer{{Decision: allow, Reason: "r"}}, res(bob, "get", "", "*", "pods", "", "", ""), "Allow/r/<nil>"},
		{"omitted decision is deny", celenv.RuleAuthorizer{{User: "bob"}}, path(bob, "get", "/x"), "Deny//<nil>"},
		{"first match wins", celenv.RuleAuthorizer{
			{Verb: "get", Decision: deny, Reason: "first"},
			{Verb: "get", Decision: allow, Reason: "second"},
		}, path(bob, "get", "/x"), "Deny/first/<nil>"},
		{"later rule when earlier does not match", celenv.RuleAuthorizer{
			{Verb: "list", Decision: deny, Reason: "first"},
			{Verb: "get", Decision: allow, Reason: "second"},
		}, path(bob, "get", "/x"), "Allow/second/<nil>"},
		{"user", celenv.RuleAuthorizer{{User: "bob", Decision: allow}}, path(bob, "get", "/x"), "Allow//<nil>"},
		{"verb case-sensitive", celenv.RuleAuthorizer{{Verb: "get", Decision: allow}}, path(bob, "GET", "/x"), "NoOpinion//<nil>"},
		{"groups any of", celenv.RuleAuthorizer{{Groups: []string{"admins", "devs"}, Decision: allow}}, path(bob, "get", "/x"), "Allow//<nil>"},
		{"groups none of", celenv.RuleAuthorizer{{Groups: []string{"admins"}, Decision: allow}}, path(bob, "get", "/x"), "NoOpinion//<nil>"},
		{"groups without user groups", celenv.RuleAuthorizer{{Groups: []string{"admins"}, Decision: allow}}, path(authenticationv1.UserInfo{Username: "x"}, "get", "/x"), "NoOpinion//<nil>"},
		{"all resource fields", celenv.RuleAuthorizer{{User: "bob", Groups: []string{"devs"}, Verb: "update", APIGroup: "apps", APIVersion: "v1",
			Resource: "deployments", Subresource: "scale", Namespace: "team-a", Name: "web", Decision: allow, Reason: "because"}},
			res(bob, "update", "apps", "v1", "deployments", "scale", "team-a", "web"), "Allow/because/<nil>"},
		{"api version compared exactly", celenv.RuleAuthorizer{{APIVersion: "v1", Decision: allow}},
			res(bob, "update", "apps", "*", "deployments", "", "", ""), "NoOpinion//<nil>"},
		{"api group", celenv.RuleAuthorizer{{APIGroup: "apps", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"resource", celenv.RuleAuthorizer{{Resource: "pods", Decision: allow}}, res(bob, "get", "", "*", "secrets", "", "", ""), "NoOpinion//<nil>"},
		{"subresource", celenv.RuleAuthorizer{{Subresource: "status", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"namespace", celenv.RuleAuthorizer{{Namespace: "a", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "b", ""), "NoOpinion//<nil>"},
		{"name", celenv.RuleAuthorizer{{Name: "a", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", "b"), "NoOpinion//<nil>"},
		{"empty api group matches core and others", celenv.RuleAuthorizer{{APIGroup: "", Resource: "pods", Decision: allow}}, res(bob, "get", "metrics.k8s.io", "*", "pods", "", "", ""), "Allow//<nil>"},
		{"resource rule never matches path", celenv.RuleAuthorizer{{Namespace: "a", Decision: allow}}, path(bob, "get", "/x"), "NoOpinion//<nil>"},
		{"each resource field makes a resource rule", celenv.RuleAuthorizer{
			{APIGroup: "a", Decision: allow}, {APIVersion: "a", Decision: allow}, {Resource: "a", Decision: allow},
			{Subresource: "a", Decision: allow}, {Name: "a", Decision: allow},
		}, path(bob, "get", "/x"), "NoOpinion//<nil>"},
		{"path rule never matches resource", celenv.RuleAuthorizer{{Path: "*", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"path exact", celenv.RuleAuthorizer{{Path: "/metrics", Decision: allow}}, path(bob, "get", "/metrics"), "Allow//<nil>"},
		{"path exact no prefix", celenv.RuleAuthorizer{{Path: "/metrics", Decision: allow}}, path(bob, "get", "/metrics/x"), "NoOpinion//<nil>"},
		{"path not normalised", celenv.RuleAuthorizer{{Path: "/metrics", Decision: allow}}, path(bob, "get", "metrics"), "NoOpinion//<nil>"},
		{"path prefix", celenv.RuleAuthorizer{{Path: "/logs/*", Decision: allow}}, path(bob, "get", "/logs/a/b"), "Allow//<nil>"},
		{"path prefix matches bare prefix", celenv.RuleAuthorizer{{Path: "/logs/*", Decision: allow}}, path(bob, "get", "/logs/"), "Allow//<nil>"},
		{"path prefix mismatch", celenv.RuleAuthorizer{{Path: "/logs/*", Decision: allow}}, path(bob, "get", "/logs"), "NoOpinion//<nil>"},
		{"path star", celenv.RuleAuthorizer{{Path: "*", Decision: allow}}, path(bob, "get", "/anything"), "Allow//<nil>"},
		{"star only trailing", celenv.RuleAuthorizer{{Path: "/a*/b", Decision: allow}}, path(bob, "get", "/ab/b"), "NoOpinion//<nil>"},
		{"error with decision", celenv.RuleAuthorizer{{Resource: "secrets", Decision: none, Error: "authorizer down"}},
			res(bob, "get", "", "*", "secrets", "", "", ""), "NoOpinion//authorizer down"},
		{"error with allow and reason", celenv.RuleAuthorizer{{Decision: allow, Reason: "r", Error: "e"}}, path(bob, "get", "/"), "Allow/r/e"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := tc.rules.Authorize(t.Context(), tc.attrs)
			got := fmt.Sprintf("%v/%s/%v", r.Decision, r.Reason, err)
			if got != tc.want {
				t.Errorf("Authorize() = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestRuleAuthorizerConformance replays the authorizer expressions of the
// conformance cases authorizer-checks and authorizer-groups-path-errors
// with their rules and users, expecting the outcome the expected responses
// imply.
func TestRuleAuthorizerConformance(t *testing.T) {
	checksRules := mustRules(t, `
apiVersion: vapkit.dev/v1alpha1
kind: AuthorizerRules
rules:
- {user: bob, verb: approve, apiGroup: example.com, resource: deployments, subresource: approval, namespace: team-a, decision: Deny, reason: "bob is not an approver"}
- {user: bob, verb: escalate, resource: deployments, decision: Allow}
- {user: "system:serviceaccount:kube-system:deployer", verb: update, apiGroup: apps, resource: deployments, namespace: team-b, decision: Allow}
- {user: bob, verb: delete, namespace: team-a, decision: Allow, reason: "bob may delete in team-a"}
`)
	miscRules := mustRules(t, `
apiVersion: vapkit.dev/v1alpha1
kind: AuthorizerRules
rules:
- {groups: [monitoring], path: "/metrics", verb: get, decision: Allow}
- {resource: secrets, verb: list, decision: NoOpinion, error: "webhook authorizer unavailable"}
- {groups: [admins], resource: secrets, decision: Allow}
- {resource: secrets, decision: Deny, reason: "secrets are off limits"}
`)
	bob := authenticationv1.UserInfo{Username: "bob", Groups: []string{"developers", "system:authenticated"}}
	dave := authenticationv1.UserInfo{Username: "dave", Groups: []string{"monitoring", "system:authenticated"}}
	tests := []struct {
		rules celenv.RuleAuthorizer
		user  authenticationv1.UserInfo
		expr  string
		want  bool
	}{
		// authorizer-checks (request: apps deployments team-a/web, here with subresource scale)
		{checksRules, bob, "authorizer.group('example.com').resource('deployments').subresource('approval').namespace('team-a').name('web').check('approve').allowed()", false},
		{checksRules, bob, "authorizer.group('example.com').resource('deployments').subresource('approval').namespace('team-a').name('web').check('approve').reason() == 'bob is not an approver'", true},
		{checksRules, bob, "authorizer.requestResource.check('escalate').allowed()", true},
		{checksRules, bob, "authorizer.serviceAccount('kube-system', 'deployer').group('apps').resource('deployments').namespace('team-a').check('update').allowed()", false},
		{checksRules, bob, "authorizer.serviceAccount('kube-system', 'deployer').group('apps').resource('deployments').namespace('team-b').check('update').allowed()", true},
		{checksRules, bob, "authorizer.requestResource.check('delete').reason() == 'bob may delete in team-a'", true},
		// authorizer-groups-path-errors
		{miscRules, dave, "authorizer.path('/metrics').check('get').allowed()", true},
		{miscRules, bob, "authorizer.path('/metrics').check('get').allowed()", false},
		{miscRules, dave, "!authorizer.group('').resource('secrets').namespace('default').check('list').errored()", false},
		{miscRules, dave, "authorizer.group('').resource('secrets').namespace('default').check('list').error() == 'webhook authorizer unavailable'", true},
		{miscRules, dave, "authorizer.group('').resource('secrets').namespace('default').check('get').allowed()", false},
		{miscRules, dave, "authorizer.group('').resource('secrets').namespace('default').check('get').reason() == 'secrets are off limits'", true},
	}
	env := newAuthzEnv(t)
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			t.Parallel()
			got := evalAuthz(t, env, tc.expr, authz.NewCaching(tc.rules), tc.user)
			if got.err != nil || got.val != types.Bool(tc.want) {
				t.Errorf("Eval(%q) = %v, %v; want %v", tc.expr, got.val, got.err, tc.want)
			}
		})
	}
}
