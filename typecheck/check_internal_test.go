package typecheck

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/policy/manifest"
)

func rule(groups, versions, resources []string) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources},
	}}
}

func policyWithRules(rules ...admissionregistrationv1.NamedRuleWithOperations) *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: rules},
	}}
}

// fakeKinds maps every resource "rN" of group "g" to kind "KN" in each
// version asked for, and knows a few built-in names.
type fakeKinds struct{}

func (fakeKinds) KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	var n int
	if _, err := fmt.Sscanf(gvr.Resource, "r%d", &n); err != nil {
		return nil, fmt.Errorf("no kind for %v", gvr)
	}
	return []schema.GroupVersionKind{{Group: gvr.Group, Version: gvr.Version, Kind: fmt.Sprintf("K%02d", n)}}, nil
}

func resources(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("r%d", i))
	}
	return out
}

func kinds(group string, from, to int) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for i := from; i <= to; i++ {
		out = append(out, schema.GroupVersionKind{Group: group, Version: "v1", Kind: fmt.Sprintf("K%02d", i)})
	}
	return out
}

func TestTypesToCheck(t *testing.T) {
	builtinKinds, err := manifest.NewResourceMapper()
	if err != nil {
		t.Fatalf("NewResourceMapper() = %v", err)
	}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	pod := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	tests := []struct {
		name   string
		policy *admissionregistrationv1.ValidatingAdmissionPolicy
		mapper KindMapper
		want   []schema.GroupVersionKind
	}{
		{name: "no constraints", policy: &admissionregistrationv1.ValidatingAdmissionPolicy{}},
		{name: "no rules", policy: policyWithRules()},
		{name: "specific", policy: policyWithRules(rule([]string{"apps"}, []string{"v1"}, []string{"deployments"})), want: []schema.GroupVersionKind{deploy}},
		{name: "sorted by group", policy: policyWithRules(
			rule([]string{"apps"}, []string{"v1"}, []string{"deployments"}),
			rule([]string{""}, []string{"v1"}, []string{"pods"})), want: []schema.GroupVersionKind{pod, deploy}},
		{name: "wildcard resource", policy: policyWithRules(rule([]string{"apps"}, []string{"v1"}, []string{"*"}))},
		{name: "subresources", policy: policyWithRules(rule([]string{"apps"}, []string{"v1"}, []string{"deployments/status", "pods/*"}))},
		{name: "wildcard version skips the rule", policy: policyWithRules(
			rule([]string{"apps"}, []string{"v1"}, []string{"deployments"}),
			rule([]string{""}, []string{"*"}, []string{"pods"})), want: []schema.GroupVersionKind{deploy}},
		{name: "wildcard group skips the rule", policy: policyWithRules(rule([]string{"apps", "*"}, []string{"v1"}, []string{"deployments"}))},
		{name: "singular and capitalised", policy: policyWithRules(rule([]string{"apps"}, []string{"v1"}, []string{"Deployment"})), want: []schema.GroupVersionKind{deploy}},
		{name: "empty group matches every group", policy: policyWithRules(rule([]string{""}, []string{"v1"}, []string{"events"})),
			want: []schema.GroupVersionKind{{Version: "v1", Kind: "Event"}, {Group: "events.k8s.io", Version: "v1", Kind: "Event"}}},
		{name: "unknown resource", policy: policyWithRules(rule([]string{"example.com"}, []string{"v1"}, []string{"widgets"}))},
		{name: "cap of 10 per rule returns early", mapper: fakeKinds{}, policy: policyWithRules(
			rule([]string{"g"}, []string{"v1"}, resources(1, 12)),
			rule([]string{"h"}, []string{"v1"}, resources(1, 1))),
			// r1, r10, r11, r12, r2 ... r7 in string order: ten kinds.
			want: append(kinds("g", 1, 7), kinds("g", 10, 12)...)},
		{name: "cap counts per rule", mapper: fakeKinds{}, policy: policyWithRules(
			rule([]string{"g"}, []string{"v1"}, resources(1, 6)),
			rule([]string{"h"}, []string{"v1"}, resources(1, 6))),
			want: append(kinds("g", 1, 6), kinds("h", 1, 6)...)},
		{name: "duplicates count towards the cap", mapper: fakeKinds{}, policy: policyWithRules(
			rule([]string{"g"}, []string{"v1"}, []string{"r1", "r01", "r001", "r0001", "r00001", "r000001", "r0000001", "r00000001", "r000000001", "r0000000001", "r2"}),
			rule([]string{"h"}, []string{"v1"}, []string{"r3"})),
			want: kinds("g", 1, 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.mapper
			if m == nil {
				m = builtinKinds
			}
			got := typesToCheck(tc.policy, m)
			sortGVKs(tc.want)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("typesToCheck() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func rawDefs(m map[string]string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		out[k] = json.RawMessage(v)
	}
	return out
}

func TestPopulateRefsCycle(t *testing.T) {
	defs := map[string]string{
		"A": `{"type":"object","properties":{"b":{"$ref":"B"},"self":{"$ref":"A"}}}`,
		"B": `{"type":"object","properties":{"a":{"allOf":[{"$ref":"A"}]},"n":{"type":"integer"},"list":{"type":"array","items":{"$ref":"B"}}}}`,
	}
	lookup := (&definitions{defs: rawDefs(defs)}).lookup()
	s, err := populateRefs(lookup, "A")
	if err != nil {
		t.Fatalf("populateRefs() = %v", err)
	}
	if got := s.Properties["self"].Type; !got.Contains("object") || s.Properties["self"].Properties != nil {
		t.Errorf("self = %v, want {type: object}", s.Properties["self"])
	}
	b := s.Properties["b"]
	if got := b.Properties["n"].Type; !got.Contains("integer") {
		t.Errorf("b.n type = %v, want integer", got)
	}
	if a := b.Properties["a"]; a.Properties != nil || !a.Type.Contains("object") {
		t.Errorf("b.a = %v, want {type: object}", a)
	}
	if l := b.Properties["list"]; l.Items.Schema.Properties != nil {
		t.Errorf("b.list items = %v, want {type: object}", l.Items.Schema)
	}
	if _, err := populateRefs(lookup, "C"); err == nil {
		t.Errorf("populateRefs(C) = nil error, want not found")
	}
}
