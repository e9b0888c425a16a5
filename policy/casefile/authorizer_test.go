package casefile_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/policy/casefile"
)

// authorizerRulesDoc is the vapkit.dev/v1alpha1 AuthorizerRules document.
type authorizerRulesDoc struct {
	APIVersion string                  `json:"apiVersion"`
	Kind       string                  `json:"kind"`
	Rules      casefile.RuleAuthorizer `json:"rules"`
}

func mustRules(t *testing.T, doc string) casefile.RuleAuthorizer {
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
	want := casefile.RuleAuthorizer{
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
		rules casefile.RuleAuthorizer
		attrs authz.Attributes
		want  string // decision/reason/error
	}{
		{"no rules", nil, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"no match", casefile.RuleAuthorizer{{User: "ann", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"empty rule matches anything", casefile.RuleAuthorizer{{Decision: allow, Reason: "r"}}, path(bob, "get", "/x"), "Allow/r/<nil>"},
		{"empty rule matches resources", casefile.RuleAuthorizer{{Decision: allow, Reason: "r"}}, res(bob, "get", "", "*", "pods", "", "", ""), "Allow/r/<nil>"},
		{"omitted decision is deny", casefile.RuleAuthorizer{{User: "bob"}}, path(bob, "get", "/x"), "Deny//<nil>"},
		{"first match wins", casefile.RuleAuthorizer{
			{Verb: "get", Decision: deny, Reason: "first"},
			{Verb: "get", Decision: allow, Reason: "second"},
		}, path(bob, "get", "/x"), "Deny/first/<nil>"},
		{"later rule when earlier does not match", casefile.RuleAuthorizer{
			{Verb: "list", Decision: deny, Reason: "first"},
			{Verb: "get", Decision: allow, Reason: "second"},
		}, path(bob, "get", "/x"), "Allow/second/<nil>"},
		{"user", casefile.RuleAuthorizer{{User: "bob", Decision: allow}}, path(bob, "get", "/x"), "Allow//<nil>"},
		{"verb case-sensitive", casefile.RuleAuthorizer{{Verb: "get", Decision: allow}}, path(bob, "GET", "/x"), "NoOpinion//<nil>"},
		{"groups any of", casefile.RuleAuthorizer{{Groups: []string{"admins", "devs"}, Decision: allow}}, path(bob, "get", "/x"), "Allow//<nil>"},
		{"groups none of", casefile.RuleAuthorizer{{Groups: []string{"admins"}, Decision: allow}}, path(bob, "get", "/x"), "NoOpinion//<nil>"},
		{"groups without user groups", casefile.RuleAuthorizer{{Groups: []string{"admins"}, Decision: allow}}, path(authenticationv1.UserInfo{Username: "x"}, "get", "/x"), "NoOpinion//<nil>"},
		{"all resource fields", casefile.RuleAuthorizer{{User: "bob", Groups: []string{"devs"}, Verb: "update", APIGroup: "apps", APIVersion: "v1",
			Resource: "deployments", Subresource: "scale", Namespace: "team-a", Name: "web", Decision: allow, Reason: "because"}},
			res(bob, "update", "apps", "v1", "deployments", "scale", "team-a", "web"), "Allow/because/<nil>"},
		{"api version compared exactly", casefile.RuleAuthorizer{{APIVersion: "v1", Decision: allow}},
			res(bob, "update", "apps", "*", "deployments", "", "", ""), "NoOpinion//<nil>"},
		{"api group", casefile.RuleAuthorizer{{APIGroup: "apps", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"resource", casefile.RuleAuthorizer{{Resource: "pods", Decision: allow}}, res(bob, "get", "", "*", "secrets", "", "", ""), "NoOpinion//<nil>"},
		{"subresource", casefile.RuleAuthorizer{{Subresource: "status", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"namespace", casefile.RuleAuthorizer{{Namespace: "a", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "b", ""), "NoOpinion//<nil>"},
		{"name", casefile.RuleAuthorizer{{Name: "a", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", "b"), "NoOpinion//<nil>"},
		{"empty api group matches core and others", casefile.RuleAuthorizer{{APIGroup: "", Resource: "pods", Decision: allow}}, res(bob, "get", "metrics.k8s.io", "*", "pods", "", "", ""), "Allow//<nil>"},
		{"resource rule never matches path", casefile.RuleAuthorizer{{Namespace: "a", Decision: allow}}, path(bob, "get", "/x"), "NoOpinion//<nil>"},
		{"each resource field makes a resource rule", casefile.RuleAuthorizer{
			{APIGroup: "a", Decision: allow}, {APIVersion: "a", Decision: allow}, {Resource: "a", Decision: allow},
			{Subresource: "a", Decision: allow}, {Name: "a", Decision: allow},
		}, path(bob, "get", "/x"), "NoOpinion//<nil>"},
		{"path rule never matches resource", casefile.RuleAuthorizer{{Path: "*", Decision: allow}}, res(bob, "get", "", "*", "pods", "", "", ""), "NoOpinion//<nil>"},
		{"path exact", casefile.RuleAuthorizer{{Path: "/metrics", Decision: allow}}, path(bob, "get", "/metrics"), "Allow//<nil>"},
		{"path exact no prefix", casefile.RuleAuthorizer{{Path: "/metrics", Decision: allow}}, path(bob, "get", "/metrics/x"), "NoOpinion//<nil>"},
		{"path not normalised", casefile.RuleAuthorizer{{Path: "/metrics", Decision: allow}}, path(bob, "get", "metrics"), "NoOpinion//<nil>"},
		{"path prefix", casefile.RuleAuthorizer{{Path: "/logs/*", Decision: allow}}, path(bob, "get", "/logs/a/b"), "Allow//<nil>"},
		{"path prefix matches bare prefix", casefile.RuleAuthorizer{{Path: "/logs/*", Decision: allow}}, path(bob, "get", "/logs/"), "Allow//<nil>"},
		{"path prefix mismatch", casefile.RuleAuthorizer{{Path: "/logs/*", Decision: allow}}, path(bob, "get", "/logs"), "NoOpinion//<nil>"},
		{"path star", casefile.RuleAuthorizer{{Path: "*", Decision: allow}}, path(bob, "get", "/anything"), "Allow//<nil>"},
		{"star only trailing", casefile.RuleAuthorizer{{Path: "/a*/b", Decision: allow}}, path(bob, "get", "/ab/b"), "NoOpinion//<nil>"},
		{"error with decision", casefile.RuleAuthorizer{{Resource: "secrets", Decision: none, Error: "authorizer down"}},
			res(bob, "get", "", "*", "secrets", "", "", ""), "NoOpinion//authorizer down"},
		{"error with allow and reason", casefile.RuleAuthorizer{{Decision: allow, Reason: "r", Error: "e"}}, path(bob, "get", "/"), "Allow/r/e"},
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
