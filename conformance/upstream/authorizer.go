//go:build !vapkit_harness

package upstream

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/policy/casefile"
)

// authorizerRules is what a case's AuthorizerRules document decodes to:
// vapkit's own rules, checked as they are decoded.
type authorizerRules = casefile.RuleAuthorizer

// RulesAuthorizer serves a case's AuthorizerRules to the upstream plugin: it
// adapts vapkit's one implementation of the rules, [casefile.RuleAuthorizer],
// to k8s.io/apiserver's authorizer.Authorizer, so that both sides of the
// diff decide authorization checks with the same code.
type RulesAuthorizer struct {
	rules casefile.RuleAuthorizer
}

var _ authorizer.Authorizer = (*RulesAuthorizer)(nil)

// NewRulesAuthorizer returns an authorizer for rules. It never fails: the
// rules' decisions were checked when they were decoded.
func NewRulesAuthorizer(rules casefile.RuleAuthorizer) (*RulesAuthorizer, error) {
	return &RulesAuthorizer{rules: rules}, nil
}

// Authorize returns the decision, reason and error of the first rule that
// matches a, or NoOpinion.
func (ra *RulesAuthorizer) Authorize(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	res, err := ra.rules.Authorize(ctx, attributes(a))
	var d authorizer.Decision
	switch res.Decision {
	case authz.Allow:
		d = authorizer.DecisionAllow
	case authz.Deny:
		d = authorizer.DecisionDeny
	default:
		d = authorizer.DecisionNoOpinion
	}
	return d, res.Reason, err
}

// attributes converts the fields the rules read.
func attributes(a authorizer.Attributes) authz.Attributes {
	out := authz.Attributes{
		Verb:            a.GetVerb(),
		ResourceRequest: a.IsResourceRequest(),
		Path:            a.GetPath(),
		APIGroup:        a.GetAPIGroup(),
		APIVersion:      a.GetAPIVersion(),
		Resource:        a.GetResource(),
		Subresource:     a.GetSubresource(),
		Namespace:       a.GetNamespace(),
		Name:            a.GetName(),
	}
	if u := a.GetUser(); u != nil {
		out.User = authenticationv1.UserInfo{Username: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups()}
	}
	return out
}

// ConditionsAwareAuthorize returns the unconditional decision of Authorize.
func (ra *RulesAuthorizer) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(ra.Authorize(ctx, a))
}

// EvaluateConditions is not supported: RulesAuthorizer never returns a
// conditional decision.
func (ra *RulesAuthorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}
