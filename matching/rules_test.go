package matching

import (
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// ruleCase is one rule with requests it must and must not match, as in
// upstream predicates/rules/rules_test.go.
type ruleCase struct {
	name    string
	rule    admissionregistrationv1.RuleWithOperations
	match   []*Attributes
	noMatch []*Attributes
}

// req builds a request in namespace "ns"; clusterReq one without namespace.
func req(group, version, resource, sub, op string) *Attributes {
	return &Attributes{Operation: op, Resource: gvr(group, version, resource), SubResource: sub, Namespace: "ns", Name: "name"}
}

func clusterReq(group, version, resource, sub string) *Attributes {
	a := req(group, version, resource, sub, "CREATE")
	a.Namespace = ""
	return a
}

// full fills the parts of r not under test with wildcards.
func full(r admissionregistrationv1.RuleWithOperations) admissionregistrationv1.RuleWithOperations {
	if r.Operations == nil {
		r.Operations = []admissionregistrationv1.OperationType{"*"}
	}
	if r.APIGroups == nil {
		r.APIGroups = strs("*")
	}
	if r.APIVersions == nil {
		r.APIVersions = strs("*")
	}
	if r.Resources == nil {
		r.Resources = strs("*")
	}
	return r
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		r := full(tc.rule)
		for i, a := range tc.match {
			t.Run(fmt.Sprintf("%s/match_%d", tc.name, i), func(t *testing.T) {
				t.Parallel()
				if !ruleMatches(&r, a, a.Resource) {
					t.Errorf("ruleMatches(%+v, %+v) = false, want true", r, *a)
				}
			})
		}
		for i, a := range tc.noMatch {
			t.Run(fmt.Sprintf("%s/nomatch_%d", tc.name, i), func(t *testing.T) {
				t.Parallel()
				if ruleMatches(&r, a, a.Resource) {
					t.Errorf("ruleMatches(%+v, %+v) = true, want false", r, *a)
				}
			})
		}
	}
}

func TestRuleGroup(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{
			name:  "wildcard",
			rule:  admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{APIGroups: strs("*")}},
			match: []*Attributes{req("g", "v", "r", "", "CREATE")},
		},
		{
			name:    "exact",
			rule:    admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{APIGroups: strs("g1", "g2")}},
			match:   []*Attributes{req("g1", "v", "r", "", "CREATE"), req("g2", "v2", "r3", "", "CREATE")},
			noMatch: []*Attributes{req("g3", "v", "r", "", "CREATE"), req("g4", "v", "r", "", "CREATE")},
		},
		{
			name:    "empty list matches nothing",
			rule:    admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{APIGroups: []string{}}},
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), req("", "v", "r", "", "CREATE")},
		},
	})
}

func TestRuleVersion(t *testing.T) {
	t.Parallel()
	runRuleCases(t, []ruleCase{
		{
			name:  "wildcard",
			rule:  admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{APIVersions: strs("*")}},
			match: []*Attributes{req("g", "v", "r", "", "CREATE")},
		},
		{
			name:    "exact",
			rule:    admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{APIVersions: strs("v1", "v2")}},
			match:   []*Attributes{req("g1", "v1", "r", "", "CREATE"), req("g2", "v2", "r", "", "CREATE")},
			noMatch: []*Attributes{req("g1", "v3", "r", "", "CREATE"), req("g2", "v4", "r", "", "CREATE")},
		},
	})
}

func TestRuleOperation(t *testing.T) {
	t.Parallel()
	ops := func(o ...admissionregistrationv1.OperationType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: o}
	}
	runRuleCases(t, []ruleCase{
		{
			name: "wildcard",
			rule: ops(admissionregistrationv1.OperationAll),
			match: []*Attributes{
				req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "", "UPDATE"),
				req("g", "v", "r", "", "DELETE"), req("g", "v", "r", "", "CONNECT"),
			},
		},
		{
			name:    "create",
			rule:    ops(admissionregistrationv1.Create),
			match:   []*Attributes{req("g", "v", "r", "", "CREATE")},
			noMatch: []*Attributes{req("g", "v", "r", "", "UPDATE"), req("g", "v", "r", "", "DELETE"), req("g", "v", "r", "", "CONNECT")},
		},
		{
			name:    "update",
			rule:    ops(admissionregistrationv1.Update),
			match:   []*Attributes{req("g", "v", "r", "", "UPDATE")},
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "", "DELETE"), req("g", "v", "r", "", "CONNECT")},
		},
		{
			name:    "delete",
			rule:    ops(admissionregistrationv1.Delete),
			match:   []*Attributes{req("g", "v", "r", "", "DELETE")},
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "", "UPDATE"), req("g", "v", "r", "", "CONNECT")},
		},
		{
			name:    "connect",
			rule:    ops(admissionregistrationv1.Connect),
			match:   []*Attributes{req("g", "v", "r", "", "CONNECT")},
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "", "UPDATE"), req("g", "v", "r", "", "DELETE")},
		},
		{
			name:    "multiple",
			rule:    ops(admissionregistrationv1.Update, admissionregistrationv1.Delete),
			match:   []*Attributes{req("g", "v", "r", "", "UPDATE"), req("g", "v", "r", "", "DELETE")},
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "", "CONNECT")},
		},
	})
}

func TestRuleResource(t *testing.T) {
	t.Parallel()
	res := func(r ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{Resources: r}}
	}
	runRuleCases(t, []ruleCase{
		{
			name:    "no subresources",
			rule:    res("*"),
			match:   []*Attributes{req("g", "v", "r", "", "CREATE"), req("2", "v", "r2", "", "CREATE")},
			noMatch: []*Attributes{req("g", "v", "r", "exec", "CREATE"), req("2", "v", "r2", "proxy", "CREATE")},
		},
		{
			name:    "r & subresources",
			rule:    res("r/*"),
			match:   []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "exec", "CREATE")},
			noMatch: []*Attributes{req("2", "v", "r2", "", "CREATE"), req("2", "v", "r2", "proxy", "CREATE")},
		},
		{
			name:    "r & subresources or r2",
			rule:    res("r/*", "r2"),
			match:   []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "exec", "CREATE"), req("2", "v", "r2", "", "CREATE")},
			noMatch: []*Attributes{req("2", "v", "r2", "proxy", "CREATE")},
		},
		{
			name:    "proxy or exec",
			rule:    res("*/proxy", "*/exec"),
			match:   []*Attributes{req("g", "v", "r", "exec", "CREATE"), req("2", "v", "r2", "proxy", "CREATE"), req("2", "v", "r3", "proxy", "CREATE")},
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), req("2", "v", "r2", "", "CREATE"), req("2", "v", "r4", "scale", "CREATE")},
		},
		{
			name:    "exact resource only",
			rule:    res("pods"),
			match:   []*Attributes{req("", "v1", "pods", "", "CREATE")},
			noMatch: []*Attributes{req("", "v1", "pods", "log", "CREATE"), req("", "v1", "services", "", "CREATE")},
		},
		{
			name:    "exact subresource",
			rule:    res("pods/log"),
			match:   []*Attributes{req("", "v1", "pods", "log", "CONNECT")},
			noMatch: []*Attributes{req("", "v1", "pods", "", "CREATE"), req("", "v1", "pods", "exec", "CONNECT")},
		},
		{
			name:  "everything with */*",
			rule:  res("*/*"),
			match: []*Attributes{req("", "v1", "pods", "", "CREATE"), req("", "v1", "pods", "log", "CREATE"), req("apps", "v1", "deployments", "scale", "UPDATE")},
		},
		{
			name:    "split at the first slash",
			rule:    res("pods/a/b"),
			match:   []*Attributes{req("", "v1", "pods", "a/b", "CREATE")},
			noMatch: []*Attributes{req("", "v1", "pods", "a", "CREATE")},
		},
	})
}

func TestRuleScope(t *testing.T) {
	t.Parallel()
	scoped := func(s admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{Resources: strs("*", "*/*"), Scope: &s}}
	}
	clusterNS := clusterReq("", "v1", "namespaces", "")
	clusterNSFinalize := clusterReq("", "v1", "namespaces", "finalize")
	nsNS := req("", "v1", "namespaces", "", "CREATE")
	nsNSFinalize := req("", "v1", "namespaces", "finalize", "CREATE")
	runRuleCases(t, []ruleCase{
		{
			name:    "cluster scope",
			rule:    scoped(admissionregistrationv1.ClusterScope),
			match:   []*Attributes{clusterReq("g", "v", "r", ""), clusterReq("g", "v", "r", "exec"), clusterNS, clusterNSFinalize, nsNS, nsNSFinalize},
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "exec", "CREATE"), req("g", "v1", "namespaces", "", "CREATE")},
		},
		{
			name:    "namespace scope",
			rule:    scoped(admissionregistrationv1.NamespacedScope),
			match:   []*Attributes{req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "exec", "CREATE"), req("g", "v1", "namespaces", "", "CREATE")},
			noMatch: []*Attributes{clusterNS, clusterNSFinalize, nsNS, nsNSFinalize, clusterReq("g", "v", "r", ""), clusterReq("g", "v", "r", "exec")},
		},
		{
			name: "all scopes",
			rule: scoped(admissionregistrationv1.AllScopes),
			match: []*Attributes{
				req("g", "v", "r", "", "CREATE"), req("g", "v", "r", "exec", "CREATE"),
				clusterReq("g", "v", "r", ""), clusterReq("g", "v", "r", "exec"),
				clusterNS, clusterNSFinalize, nsNS, nsNSFinalize,
			},
		},
		{
			name:  "nil scope",
			rule:  admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{Resources: strs("*")}},
			match: []*Attributes{req("g", "v", "r", "", "CREATE"), clusterReq("g", "v", "r", ""), nsNS},
		},
		{
			name:    "unknown scope matches nothing",
			rule:    scoped("Galaxy"),
			noMatch: []*Attributes{req("g", "v", "r", "", "CREATE"), clusterReq("g", "v", "r", ""), nsNS},
		},
	})
}

func TestRuleResourceNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		names []string
		req   string
		want  bool
	}{
		{name: "empty list admits any name", names: nil, req: "x", want: true},
		{name: "empty list admits empty name", names: nil, req: "", want: true},
		{name: "listed name", names: strs("a", "x"), req: "x", want: true},
		{name: "unlisted name", names: strs("a"), req: "x", want: false},
		{name: "generateName create never matches names", names: strs("a"), req: "", want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := nameMatches(tc.names, tc.req); got != tc.want {
				t.Errorf("nameMatches(%q, %q) = %v, want %v", tc.names, tc.req, got, tc.want)
			}
		})
	}
}
