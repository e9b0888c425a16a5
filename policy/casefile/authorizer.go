package casefile

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/vapkit/vapkit/celenv/authz"
)

// AuthorizerRule is one rule of a [RuleAuthorizer]. Its JSON form is an
// entry of the rules list of a vapkit.dev/v1alpha1 AuthorizerRules document.
//
// Every condition field that is empty matches anything. A rule with any of
// APIGroup, APIVersion, Resource, Subresource, Namespace or Name set is a
// resource rule and never matches a path check; a rule with Path set never
// matches a resource check. Fields are compared exactly (case-sensitive);
// note that checks made from CEL carry APIVersion "*".
type AuthorizerRule struct {
	// User matches the username.
	User string `json:"user,omitempty"`
	// Groups matches when the user is in at least one of the groups.
	Groups []string `json:"groups,omitempty"`
	// Verb matches the verb.
	Verb string `json:"verb,omitempty"`
	// APIGroup matches the API group of a resource check. Because empty
	// means "any", a rule cannot single out the core group.
	APIGroup string `json:"apiGroup,omitempty"`
	// APIVersion matches the API version of a resource check.
	APIVersion string `json:"apiVersion,omitempty"`
	// Resource matches the resource of a resource check.
	Resource string `json:"resource,omitempty"`
	// Subresource matches the subresource of a resource check.
	Subresource string `json:"subresource,omitempty"`
	// Namespace matches the namespace of a resource check.
	Namespace string `json:"namespace,omitempty"`
	// Name matches the object name of a resource check.
	Name string `json:"name,omitempty"`
	// Path matches the path of a path check: exactly, or, when it ends with
	// "*", every path starting with what precedes the "*".
	Path string `json:"path,omitempty"`

	// Decision is the verdict of a matching rule; omitted means Deny, the
	// zero [authz.Decision].
	Decision authz.Decision `json:"decision,omitempty"`
	// Reason is the reason reported with the verdict.
	Reason string `json:"reason,omitempty"`
	// Error, when not empty, is returned as an error along with the
	// verdict and reason.
	Error string `json:"error,omitempty"`
}

// RuleAuthorizer is an [authz.Authorizer] driven by a list of rules, for tests,
// command-line tools and the conformance cases. Rules are tried in order
// and the first matching rule decides; when none matches the result is
// [authz.NoOpinion] with no reason and no error. The zero value (no
// rules) has no opinion on anything. It is safe for concurrent use as long as
// nobody modifies the slice.
type RuleAuthorizer []AuthorizerRule

var _ authz.Authorizer = RuleAuthorizer(nil)

// Authorize implements [authz.Authorizer]. It never looks at ctx.
func (rs RuleAuthorizer) Authorize(_ context.Context, a authz.Attributes) (authz.Result, error) {
	for _, r := range rs {
		if !r.matches(a) {
			continue
		}
		res := authz.Result{Decision: r.Decision, Reason: r.Reason}
		if r.Error != "" {
			return res, errors.New(r.Error)
		}
		return res, nil
	}
	return authz.Result{Decision: authz.NoOpinion}, nil
}

// isResourceRule reports whether r sets any field that only resource checks
// have.
func (r AuthorizerRule) isResourceRule() bool {
	return r.APIGroup != "" || r.APIVersion != "" || r.Resource != "" ||
		r.Subresource != "" || r.Namespace != "" || r.Name != ""
}

func (r AuthorizerRule) matches(a authz.Attributes) bool {
	if !matchField(r.User, a.User.Username) || !matchField(r.Verb, a.Verb) {
		return false
	}
	if len(r.Groups) > 0 && !slices.ContainsFunc(a.User.Groups, func(g string) bool {
		return slices.Contains(r.Groups, g)
	}) {
		return false
	}
	if a.ResourceRequest {
		return r.Path == "" &&
			matchField(r.APIGroup, a.APIGroup) &&
			matchField(r.APIVersion, a.APIVersion) &&
			matchField(r.Resource, a.Resource) &&
			matchField(r.Subresource, a.Subresource) &&
			matchField(r.Namespace, a.Namespace) &&
			matchField(r.Name, a.Name)
	}
	if r.isResourceRule() {
		return false
	}
	if prefix, ok := strings.CutSuffix(r.Path, "*"); ok {
		return strings.HasPrefix(a.Path, prefix)
	}
	return matchField(r.Path, a.Path)
}

// matchField reports whether a rule field matches a value: empty matches
// anything.
func matchField(rule, value string) bool {
	return rule == "" || rule == value
}
