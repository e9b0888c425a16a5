// Package authz is the authorization contract behind the `authorizer`
// variable of admission expressions: the [Authorizer] a caller implements,
// the [Attributes] of the checks expressions make, and the [Decision] and
// [Result] it answers with, as k8s.io/apiserver's authorizer package defines
// them. [NewCaching] remembers the checks of one admission request, as the
// API server does. The CEL library that makes the checks is celenv's.
package authz

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// Authorizer decides whether a user may perform an action. It backs the
// authorizer variable of policy expressions. Implementations must be safe for
// concurrent use.
//
// Authorize reports the decision together with an optional error. Unlike most
// Go APIs, a non-nil error does not void the result: as with apiserver's
// authorizer.Authorizer, the decision and reason are still reported to the
// expression (Decision.allowed() and Decision.reason()) next to the error
// (Decision.errored() and Decision.error()).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (Result, error)
}

// AuthorizerFunc adapts an ordinary function to the [Authorizer] interface.
type AuthorizerFunc func(ctx context.Context, a Attributes) (Result, error)

// Authorize calls f(ctx, a).
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (Result, error) {
	return f(ctx, a)
}

var _ Authorizer = AuthorizerFunc(nil)

// Decision is the verdict of an [Authorizer]. The values and their
// order match apiserver's authorizer.Decision; the zero value is
// [Deny].
type Decision int

const (
	// Deny means the authorizer denies the action.
	Deny Decision = iota
	// Allow means the authorizer allows the action.
	Allow
	// NoOpinion means the authorizer neither allows nor denies
	// the action. Decision.allowed() is false for it.
	NoOpinion
)

// String returns "Deny", "Allow" or "NoOpinion" (apiserver's spelling), or
// "Unknown (N)" for any other value.
func (d Decision) String() string {
	switch d {
	case Deny:
		return "Deny"
	case Allow:
		return "Allow"
	case NoOpinion:
		return "NoOpinion"
	default:
		return fmt.Sprintf("Unknown (%d)", int(d))
	}
}

// MarshalText encodes d as its [Decision.String] form. It fails for
// values other than the three named constants.
func (d Decision) MarshalText() ([]byte, error) {
	switch d {
	case Deny, Allow, NoOpinion:
		return []byte(d.String()), nil
	default:
		return nil, fmt.Errorf("invalid authorization decision %d", int(d))
	}
}

// UnmarshalText decodes "Allow", "Deny" or "NoOpinion" (case-sensitive).
func (d *Decision) UnmarshalText(text []byte) error {
	switch string(text) {
	case "Deny":
		*d = Deny
	case "Allow":
		*d = Allow
	case "NoOpinion":
		*d = NoOpinion
	default:
		return fmt.Errorf("invalid authorization decision %q: want Allow, Deny or NoOpinion", string(text))
	}
	return nil
}

// Result is the outcome of one authorization check.
type Result struct {
	// Decision is the verdict.
	Decision Decision
	// Reason is an optional human-readable explanation, returned by
	// Decision.reason() in expressions.
	Reason string
}

// Attributes describes the action an [Authorizer] is asked about. It
// carries what apiserver's library passes in an authorizer.AttributesRecord.
//
// A check is either a resource check (ResourceRequest true; the API fields
// are set) or a non-resource check (ResourceRequest false; Path is set).
// Checks built by the CEL library always set APIVersion to "*", as upstream
// does.
type Attributes struct {
	// User is the subject: the request's user, or the service account chosen
	// with authorizer.serviceAccount(namespace, name).
	User authenticationv1.UserInfo
	// Verb is the API verb of a resource check or the HTTP verb of a path
	// check, exactly as written in the expression.
	Verb string
	// ResourceRequest is true for resource checks and false for path checks.
	ResourceRequest bool
	// Path is the non-resource URL path of a path check.
	Path string

	// APIGroup is the API group of a resource check ("" for the core group).
	APIGroup string
	// APIVersion is the API version of a resource check; "*" from CEL.
	APIVersion string
	// Resource is the plural resource name of a resource check.
	Resource string
	// Subresource is the subresource of a resource check, if any.
	Subresource string
	// Namespace is the namespace of a resource check ("" for cluster scope).
	Namespace string
	// Name is the object name of a resource check, if any.
	Name string

	// FieldSelector holds the requirements parsed from
	// ResourceCheck.fieldSelector(...), or nil when none was given or parsing
	// failed.
	FieldSelector fields.Requirements
	// FieldSelectorErr is the parse error of ResourceCheck.fieldSelector(...);
	// upstream hands it to the authorizer instead of failing the expression.
	FieldSelectorErr error
	// LabelSelector holds the requirements parsed from
	// ResourceCheck.labelSelector(...), or nil when none was given or parsing
	// failed.
	LabelSelector labels.Requirements
	// LabelSelectorErr is the parse error of ResourceCheck.labelSelector(...).
	LabelSelectorErr error
}

// RequestResource identifies the resource of the admission request as
// issued (not the Equivalent-matched resource). It is the target of the
// authorizer.requestResource variable.
type RequestResource struct {
	// Group is the API group of the request's resource ("" for core).
	Group string
	// Resource is the plural resource name, e.g. "deployments".
	Resource string
	// Subresource is the request's subresource, e.g. "scale", or "".
	Subresource string
	// Namespace is the request's namespace; "" for cluster-scoped requests.
	Namespace string
	// Name is the object name; "" when the request has none (a CREATE
	// with generateName).
	Name string
}

// NewCaching returns an Authorizer that remembers the outcome of
// every check it delegates to a, errors included, and answers repeated
// equivalent checks from memory, as apiserver's admission caching
// authorizer. Create one per admission request and drop it afterwards.
//
// Two checks are equivalent when their attributes are equal, with these
// upstream rules: the user's groups and the values of each extra key are
// compared as sets of the same size (order is ignored); a selector that
// failed to parse counts as absent, so its check shares the memory of the
// same check without a selector; label selectors are compared by their
// canonical string form.
//
// The returned Authorizer is safe for concurrent use. Concurrent equivalent
// checks may each reach a before the first result is stored. It returns nil
// when a is nil.
func NewCaching(a Authorizer) Authorizer {
	if a == nil {
		return nil
	}
	return &cachingAuthorizer{next: a, memo: make(map[string]cachedAuthz)}
}

type cachedAuthz struct {
	res Result
	err error
}

type cachingAuthorizer struct {
	next Authorizer

	mu   sync.Mutex
	memo map[string]cachedAuthz
}

// authzKey is the JSON-encoded identity of a check. The field set follows
// upstream's key: the user, every attribute except the parse errors, field
// selector requirements (comparable as data) and the label selector string
// (labels.Requirement has unexported fields).
type authzKey struct {
	Username        string
	UID             string
	Groups          []string
	Extra           map[string][]string
	Verb            string
	Namespace       string
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Name            string
	ResourceRequest bool
	Path            string
	FieldSelector   fields.Requirements
	LabelSelector   string
}

func newAuthzKey(a Attributes) (string, error) {
	k := authzKey{
		Username:        a.User.Username,
		UID:             a.User.UID,
		Verb:            a.Verb,
		Namespace:       a.Namespace,
		APIGroup:        a.APIGroup,
		APIVersion:      a.APIVersion,
		Resource:        a.Resource,
		Subresource:     a.Subresource,
		Name:            a.Name,
		ResourceRequest: a.ResourceRequest,
		Path:            a.Path,
	}
	if len(a.User.Groups) > 0 {
		k.Groups = slices.Sorted(slices.Values(a.User.Groups))
	}
	if len(a.User.Extra) > 0 {
		k.Extra = make(map[string][]string, len(a.User.Extra))
		for key, vals := range a.User.Extra {
			k.Extra[key] = slices.Sorted(slices.Values(vals))
		}
	}
	if len(a.FieldSelector) > 0 {
		k.FieldSelector = a.FieldSelector
	}
	if len(a.LabelSelector) > 0 {
		k.LabelSelector = a.LabelSelector.String()
	}
	// encoding/json sorts map keys, so the encoding is canonical.
	b, err := json.Marshal(k)
	if err != nil {
		return "", fmt.Errorf("building authorization cache key: %w", err)
	}
	return string(b), nil
}

// Authorize implements [Authorizer].
func (c *cachingAuthorizer) Authorize(ctx context.Context, a Attributes) (Result, error) {
	key, err := newAuthzKey(a)
	if err != nil {
		return Result{Decision: NoOpinion}, err
	}
	c.mu.Lock()
	hit, ok := c.memo[key]
	c.mu.Unlock()
	if ok {
		return hit.res, hit.err
	}
	res, err := c.next.Authorize(ctx, a)
	c.mu.Lock()
	if prev, ok := c.memo[key]; ok {
		// A concurrent equivalent check finished first; keep answers stable.
		res, err = prev.res, prev.err
	} else {
		c.memo[key] = cachedAuthz{res: res, err: err}
	}
	c.mu.Unlock()
	return res, err
}
