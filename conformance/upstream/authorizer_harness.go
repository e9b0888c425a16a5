//go:build vapkit_harness

package upstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// authorizerRules is what a case's AuthorizerRules document decodes to:
// this module does not require vapkit (and its cel-go), so the rules are
// decoded and matched here; NewRulesAuthorizer checks them.
type authorizerRules = []AuthorizerRule

// AuthorizerRule is one rule of a vapkit.dev/v1alpha1 AuthorizerRules
// document. An empty field matches anything. Path matches only
// non-resource checks (a trailing "*" is a prefix match), and a rule with any
// resource field never matches a non-resource check.
type AuthorizerRule struct {
	User        string   `json:"user,omitempty"`
	Groups      []string `json:"groups,omitempty"`
	Verb        string   `json:"verb,omitempty"`
	APIGroup    string   `json:"apiGroup,omitempty"`
	APIVersion  string   `json:"apiVersion,omitempty"`
	Resource    string   `json:"resource,omitempty"`
	Subresource string   `json:"subresource,omitempty"`
	Namespace   string   `json:"namespace,omitempty"`
	Name        string   `json:"name,omitempty"`
	Path        string   `json:"path,omitempty"`
	// Decision is Allow, Deny or NoOpinion.
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Error, when set, is returned as the check's error with the decision.
	Error string `json:"error,omitempty"`
}

// RulesAuthorizer is an authorizer.Authorizer that answers from a list of
// AuthorizerRules: the first matching rule wins, no match is NoOpinion.
type RulesAuthorizer struct {
	rules     []AuthorizerRule
	decisions []authorizer.Decision
}

var _ authorizer.Authorizer = (*RulesAuthorizer)(nil)

// NewRulesAuthorizer validates rules and returns an authorizer for them.
func NewRulesAuthorizer(rules []AuthorizerRule) (*RulesAuthorizer, error) {
	a := &RulesAuthorizer{rules: slices.Clone(rules)}
	for i, r := range rules {
		var d authorizer.Decision
		switch r.Decision {
		case "Allow":
			d = authorizer.DecisionAllow
		case "Deny":
			d = authorizer.DecisionDeny
		case "NoOpinion":
			d = authorizer.DecisionNoOpinion
		default:
			return nil, fmt.Errorf("rules[%d].decision must be Allow, Deny or NoOpinion, got %q", i, r.Decision)
		}
		if r.Path != "" && r.hasResourceField() {
			return nil, fmt.Errorf("rules[%d] sets path together with resource fields and can never match", i)
		}
		a.decisions = append(a.decisions, d)
	}
	return a, nil
}

func (r AuthorizerRule) hasResourceField() bool {
	return r.APIGroup != "" || r.APIVersion != "" || r.Resource != "" || r.Subresource != "" ||
		r.Namespace != "" || r.Name != ""
}

func fieldMatches(want, got string) bool { return want == "" || want == got }

func (r AuthorizerRule) matches(a authorizer.Attributes) bool {
	u := a.GetUser()
	if r.User != "" && (u == nil || u.GetName() != r.User) {
		return false
	}
	if len(r.Groups) > 0 {
		if u == nil || !slices.ContainsFunc(r.Groups, func(g string) bool { return slices.Contains(u.GetGroups(), g) }) {
			return false
		}
	}
	if !fieldMatches(r.Verb, a.GetVerb()) {
		return false
	}
	if !a.IsResourceRequest() {
		if r.hasResourceField() {
			return false
		}
		if prefix, ok := strings.CutSuffix(r.Path, "*"); ok {
			return strings.HasPrefix(a.GetPath(), prefix)
		}
		return fieldMatches(r.Path, a.GetPath())
	}
	if r.Path != "" {
		return false
	}
	return fieldMatches(r.APIGroup, a.GetAPIGroup()) &&
		fieldMatches(r.APIVersion, a.GetAPIVersion()) &&
		fieldMatches(r.Resource, a.GetResource()) &&
		fieldMatches(r.Subresource, a.GetSubresource()) &&
		fieldMatches(r.Namespace, a.GetNamespace()) &&
		fieldMatches(r.Name, a.GetName())
}

// Authorize returns the decision, reason and error of the first rule that
// matches a, or NoOpinion.
func (ra *RulesAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	for i, r := range ra.rules {
		if !r.matches(a) {
			continue
		}
		var err error
		if r.Error != "" {
			err = errors.New(r.Error)
		}
		return ra.decisions[i], r.Reason, err
	}
	return authorizer.DecisionNoOpinion, "", nil
}
