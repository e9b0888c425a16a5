package celenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	authenticationv1 "k8s.io/api/authentication/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
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
	Authorize(ctx context.Context, a AuthzAttributes) (AuthzResult, error)
}

// AuthorizerFunc adapts an ordinary function to the [Authorizer] interface.
type AuthorizerFunc func(ctx context.Context, a AuthzAttributes) (AuthzResult, error)

// Authorize calls f(ctx, a).
func (f AuthorizerFunc) Authorize(ctx context.Context, a AuthzAttributes) (AuthzResult, error) {
	return f(ctx, a)
}

var _ Authorizer = AuthorizerFunc(nil)

// AuthzDecision is the verdict of an [Authorizer]. The values and their
// order match apiserver's authorizer.Decision; the zero value is
// [AuthzDecisionDeny].
type AuthzDecision int

const (
	// AuthzDecisionDeny means the authorizer denies the action.
	AuthzDecisionDeny AuthzDecision = iota
	// AuthzDecisionAllow means the authorizer allows the action.
	AuthzDecisionAllow
	// AuthzDecisionNoOpinion means the authorizer neither allows nor denies
	// the action. Decision.allowed() is false for it.
	AuthzDecisionNoOpinion
)

// String returns "Deny", "Allow" or "NoOpinion" (apiserver's spelling), or
// "Unknown (N)" for any other value.
func (d AuthzDecision) String() string {
	switch d {
	case AuthzDecisionDeny:
		return "Deny"
	case AuthzDecisionAllow:
		return "Allow"
	case AuthzDecisionNoOpinion:
		return "NoOpinion"
	default:
		return fmt.Sprintf("Unknown (%d)", int(d))
	}
}

// MarshalText encodes d as its [AuthzDecision.String] form. It fails for
// values other than the three named constants.
func (d AuthzDecision) MarshalText() ([]byte, error) {
	switch d {
	case AuthzDecisionDeny, AuthzDecisionAllow, AuthzDecisionNoOpinion:
		return []byte(d.String()), nil
	default:
		return nil, fmt.Errorf("invalid authorization decision %d", int(d))
	}
}

// UnmarshalText decodes "Allow", "Deny" or "NoOpinion" (case-sensitive).
func (d *AuthzDecision) UnmarshalText(text []byte) error {
	switch string(text) {
	case "Deny":
		*d = AuthzDecisionDeny
	case "Allow":
		*d = AuthzDecisionAllow
	case "NoOpinion":
		*d = AuthzDecisionNoOpinion
	default:
		return fmt.Errorf("invalid authorization decision %q: want Allow, Deny or NoOpinion", string(text))
	}
	return nil
}

// AuthzResult is the outcome of one authorization check.
type AuthzResult struct {
	// Decision is the verdict.
	Decision AuthzDecision
	// Reason is an optional human-readable explanation, returned by
	// Decision.reason() in expressions.
	Reason string
}

// AuthzAttributes describes the action an [Authorizer] is asked about. It
// carries what apiserver's library passes in an authorizer.AttributesRecord.
//
// A check is either a resource check (ResourceRequest true; the API fields
// are set) or a non-resource check (ResourceRequest false; Path is set).
// Checks built by the CEL library always set APIVersion to "*", as upstream
// does.
type AuthzAttributes struct {
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

// errNoAuthorizer is the error a check reports when no Authorizer was given.
var errNoAuthorizer = errors.New("no authorizer configured")

// CEL types of the authorizer library; the names match apiserver's.
var (
	// AuthorizerType is the CEL type of the authorizer variable and of
	// authorizer.serviceAccount(...).
	AuthorizerType = cel.ObjectType("kubernetes.authorization.Authorizer")
	// PathCheckType is the CEL type returned by authorizer.path(...).
	PathCheckType = cel.ObjectType("kubernetes.authorization.PathCheck")
	// GroupCheckType is the CEL type returned by authorizer.group(...).
	GroupCheckType = cel.ObjectType("kubernetes.authorization.GroupCheck")
	// ResourceCheckType is the CEL type of the authorizer.requestResource
	// variable and of GroupCheck.resource(...) and its refinements.
	ResourceCheckType = cel.ObjectType("kubernetes.authorization.ResourceCheck")
	// DecisionType is the CEL type returned by check(...).
	DecisionType = cel.ObjectType("kubernetes.authorization.Decision")
)

// Authz returns the CEL library of authorization checks (Kubernetes 1.27+),
// as apiserver's library.Authz: the library name "kubernetes.authz", the
// functions, overload IDs and error texts are upstream's.
//
//	<Authorizer>.path(<string>) <PathCheck>            // error "path must not be empty" when blank
//	<Authorizer>.group(<string>) <GroupCheck>
//	<Authorizer>.serviceAccount(<string>, <string>) <Authorizer>  // namespace, name
//	<GroupCheck>.resource(<string>) <ResourceCheck>    // error "resource must not be empty" when blank
//	<ResourceCheck>.subresource(<string>) <ResourceCheck>
//	<ResourceCheck>.namespace(<string>) <ResourceCheck>
//	<ResourceCheck>.name(<string>) <ResourceCheck>
//	<PathCheck>.check(<string>) <Decision>             // HTTP verb
//	<ResourceCheck>.check(<string>) <Decision>         // API verb
//	<Decision>.allowed() <bool>
//	<Decision>.reason() <string>
//	<Decision>.errored() <bool>
//	<Decision>.error() <string>                        // "" when the check did not fail
//
// serviceAccount validates the name first ("Invalid service account name",
// a DNS subdomain) and then the namespace ("Invalid service account
// namespace", a DNS label), and checks as user
// system:serviceaccount:<namespace>:<name> in the groups
// system:serviceaccounts and system:serviceaccounts:<namespace>.
//
// Values of these types have no equality, as upstream's: == fails with
// "no such overload", while CEL's derived forms do not fail (!= is true, in
// is false, and x == null is false).
func Authz() cel.EnvOption {
	return cel.Lib(authzLib{})
}

// AuthzSelectors returns the CEL library (Kubernetes 1.31+) that adds
// selectors to resource checks, as apiserver's library.AuthzSelectors. It
// needs [Authz].
//
//	<ResourceCheck>.fieldSelector(<string>) <ResourceCheck>
//	<ResourceCheck>.labelSelector(<string>) <ResourceCheck>
//
// The selector is parsed when the check runs. A selector that does not parse
// does not fail the expression: the check carries no requirements and the
// parse error is passed to the [Authorizer] in [AuthzAttributes].
func AuthzSelectors() cel.EnvOption {
	return cel.Lib(authzSelectorsLib{})
}

type authzLib struct{}

// LibraryName makes the library a singleton, as upstream's.
func (authzLib) LibraryName() string { return "kubernetes.authz" }

func (authzLib) CompileOptions() []cel.EnvOption {
	str := cel.StringType
	return []cel.EnvOption{
		cel.Function("path", cel.MemberOverload("authorizer_path",
			[]*cel.Type{AuthorizerType, str}, PathCheckType, cel.BinaryBinding(authorizerPath))),
		cel.Function("group", cel.MemberOverload("authorizer_group",
			[]*cel.Type{AuthorizerType, str}, GroupCheckType, cel.BinaryBinding(authorizerGroup))),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount",
			[]*cel.Type{AuthorizerType, str, str}, AuthorizerType, cel.FunctionBinding(authorizerServiceAccount))),
		cel.Function("resource", cel.MemberOverload("groupcheck_resource",
			[]*cel.Type{GroupCheckType, str}, ResourceCheckType, cel.BinaryBinding(groupCheckResource))),
		cel.Function("subresource", cel.MemberOverload("resourcecheck_subresource",
			[]*cel.Type{ResourceCheckType, str}, ResourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.subresource = s }))),
		cel.Function("namespace", cel.MemberOverload("resourcecheck_namespace",
			[]*cel.Type{ResourceCheckType, str}, ResourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.namespace = s }))),
		cel.Function("name", cel.MemberOverload("resourcecheck_name",
			[]*cel.Type{ResourceCheckType, str}, ResourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.name = s }))),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{PathCheckType, str}, DecisionType, cel.BinaryBinding(pathCheckCheck)),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{ResourceCheckType, str}, DecisionType, cel.BinaryBinding(resourceCheckCheck))),
		cel.Function("errored", cel.MemberOverload("decision_errored",
			[]*cel.Type{DecisionType}, cel.BoolType, decisionAccessor(func(d decisionVal) ref.Val { return types.Bool(d.errored) }))),
		cel.Function("error", cel.MemberOverload("decision_error",
			[]*cel.Type{DecisionType}, cel.StringType, decisionAccessor(func(d decisionVal) ref.Val { return types.String(d.errMsg) }))),
		cel.Function("allowed", cel.MemberOverload("decision_allowed",
			[]*cel.Type{DecisionType}, cel.BoolType, decisionAccessor(func(d decisionVal) ref.Val { return types.Bool(d.decision == AuthzDecisionAllow) }))),
		cel.Function("reason", cel.MemberOverload("decision_reason",
			[]*cel.Type{DecisionType}, cel.StringType, decisionAccessor(func(d decisionVal) ref.Val { return types.String(d.reason) }))),
	}
}

func (authzLib) ProgramOptions() []cel.ProgramOption { return nil }

type authzSelectorsLib struct{}

// LibraryName makes the library a singleton, as upstream's.
func (authzSelectorsLib) LibraryName() string { return "kubernetes.authzSelectors" }

func (authzSelectorsLib) CompileOptions() []cel.EnvOption {
	str := cel.StringType
	return []cel.EnvOption{
		cel.Function("fieldSelector", cel.MemberOverload("authorizer_fieldselector",
			[]*cel.Type{ResourceCheckType, str}, ResourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.fieldSelector = s }))),
		cel.Function("labelSelector", cel.MemberOverload("authorizer_labelselector",
			[]*cel.Type{ResourceCheckType, str}, ResourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.labelSelector = s }))),
	}
}

func (authzSelectorsLib) ProgramOptions() []cel.ProgramOption { return nil }

// NewAuthorizerValue returns the value to bind to the authorizer variable
// (declared with [AuthorizerType]) for one evaluation. Checks are made as
// user with a.
//
// ctx is captured and passed to every Authorize call the expression makes,
// because cel-go function bindings receive no context. The value must
// therefore not outlive the evaluation it was made for.
//
// A nil a is allowed: every check then yields a Decision with
// NoOpinion and the error "no authorizer configured". (Upstream always has an
// authorizer; callers that want upstream's behaviour without one leave the
// variable unbound, which makes uses fail with "no such attribute(s)".)
func NewAuthorizerValue(ctx context.Context, a Authorizer, user authenticationv1.UserInfo) ref.Val {
	return authorizerVal{subject: &authzSubject{ctx: ctx, authorizer: a, user: user}}
}

// NewRequestResourceValue returns the value to bind to the
// authorizer.requestResource variable (declared with [ResourceCheckType]):
// a resource check for r as issued in the request, made as user with a. The
// context and nil handling are those of [NewAuthorizerValue].
func NewRequestResourceValue(ctx context.Context, a Authorizer, user authenticationv1.UserInfo, r RequestResource) ref.Val {
	s := &authzSubject{ctx: ctx, authorizer: a, user: user}
	return resourceCheckVal{
		group:       groupCheckVal{subject: s, group: r.Group},
		resource:    r.Resource,
		subresource: r.Subresource,
		namespace:   r.Namespace,
		name:        r.Name,
	}
}

// authzSubject is who checks are made for and by whom they are decided. The
// values below refer to it by pointer, which keeps them comparable Go values
// (cel-go may use values as map keys) whatever the Authorizer and user hold.
type authzSubject struct {
	// ctx is captured for the Authorize calls: cel-go bindings have no context.
	ctx        context.Context
	authorizer Authorizer
	user       authenticationv1.UserInfo
}

// authorize runs a check for attrs, made by the subject's user. A nil
// subject (only possible for zero values) behaves as a missing authorizer.
func (s *authzSubject) authorize(attrs AuthzAttributes) ref.Val {
	if s == nil || s.authorizer == nil {
		return newDecisionVal(AuthzResult{Decision: AuthzDecisionNoOpinion}, errNoAuthorizer)
	}
	ctx := s.ctx
	if ctx == nil {
		// A nil context cannot be passed on; an empty one is the closest
		// equivalent and cannot be cancelled either.
		ctx = context.TODO()
	}
	attrs.User = s.user
	return newDecisionVal(s.authorizer.Authorize(ctx, attrs))
}

// withUser returns a subject with the same context and authorizer acting
// for user.
func (s *authzSubject) withUser(user authenticationv1.UserInfo) *authzSubject {
	out := &authzSubject{user: user}
	if s != nil {
		out.ctx, out.authorizer = s.ctx, s.authorizer
	}
	return out
}

// authorizerVal is the CEL value of type kubernetes.authorization.Authorizer.
type authorizerVal struct {
	opaqueVal
	subject *authzSubject
}

func (authorizerVal) Type() ref.Type { return AuthorizerType }

// pathCheckVal is the CEL value of type kubernetes.authorization.PathCheck.
type pathCheckVal struct {
	opaqueVal
	subject *authzSubject
	path    string
}

func (pathCheckVal) Type() ref.Type { return PathCheckType }

// groupCheckVal is the CEL value of type kubernetes.authorization.GroupCheck.
type groupCheckVal struct {
	opaqueVal
	subject *authzSubject
	group   string
}

func (groupCheckVal) Type() ref.Type { return GroupCheckType }

// resourceCheckVal is the CEL value of type
// kubernetes.authorization.ResourceCheck. Setters return modified copies.
type resourceCheckVal struct {
	opaqueVal
	group         groupCheckVal
	resource      string
	subresource   string
	namespace     string
	name          string
	fieldSelector string
	labelSelector string
}

func (resourceCheckVal) Type() ref.Type { return ResourceCheckType }

// attributes builds the attributes (all but the user) of a check of r with
// verb, as upstream's resourceCheckVal.Authorize: apiVersion "*", selectors
// parsed only when non-empty, parse failures handed over rather than
// reported.
func (r resourceCheckVal) attributes(verb string) AuthzAttributes {
	attrs := AuthzAttributes{
		Verb:            verb,
		ResourceRequest: true,
		APIGroup:        r.group.group,
		APIVersion:      "*",
		Resource:        r.resource,
		Subresource:     r.subresource,
		Namespace:       r.namespace,
		Name:            r.name,
	}
	if r.fieldSelector != "" {
		if sel, err := fields.ParseSelector(r.fieldSelector); err != nil {
			attrs.FieldSelectorErr = err
		} else {
			attrs.FieldSelector = sel.Requirements()
		}
	}
	if r.labelSelector != "" {
		if reqs, err := labels.ParseToRequirements(r.labelSelector); err != nil {
			attrs.LabelSelectorErr = err
		} else {
			attrs.LabelSelector = reqs
		}
	}
	return attrs
}

// decisionVal is the CEL value of type kubernetes.authorization.Decision.
// It keeps the error's text only, to stay a comparable Go value.
type decisionVal struct {
	opaqueVal
	decision AuthzDecision
	reason   string
	errored  bool
	errMsg   string
}

func newDecisionVal(res AuthzResult, err error) decisionVal {
	d := decisionVal{decision: res.Decision, reason: res.Reason}
	if err != nil {
		d.errored, d.errMsg = true, err.Error()
	}
	return d
}

func (decisionVal) Type() ref.Type { return DecisionType }

// opaqueVal supplies the ref.Val methods shared by the authz values, which
// expose functions but no fields and no equality. Each embedding type
// provides Type, ConvertToType and ConvertToNative.
type opaqueVal struct{}

// Equal implements ref.Val. Authz values are never comparable: upstream's
// Equal accepts only its own embedded helper type, which no argument ever is,
// so == and != fail with "no such overload".
func (opaqueVal) Equal(other ref.Val) ref.Val {
	return types.MaybeNoSuchOverloadErr(other)
}

// Value implements ref.Val; like upstream it yields a no-such-overload error
// so that nothing can unwrap an authz value.
func (opaqueVal) Value() any {
	return types.NoSuchOverloadErr()
}

// ConvertToType of each value supports type(x) and the identity conversion
// only, as upstream's.
func (a authorizerVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(a, AuthorizerType, t)
}

func (p pathCheckVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(p, PathCheckType, t)
}

func (g groupCheckVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(g, GroupCheckType, t)
}

func (r resourceCheckVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(r, ResourceCheckType, t)
}

func (d decisionVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(d, DecisionType, t)
}

// ConvertToNative of each value fails, naming its type, as upstream's.
func (authorizerVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(AuthorizerType, t)
}

func (pathCheckVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(PathCheckType, t)
}

func (groupCheckVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(GroupCheckType, t)
}

func (resourceCheckVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(ResourceCheckType, t)
}

func (decisionVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(DecisionType, t)
}

func convertOpaque(v ref.Val, own *types.Type, t ref.Type) ref.Val {
	switch {
	case t == nil:
	case t == types.TypeType:
		return own
	case t.TypeName() == own.TypeName():
		return v
	}
	return types.NewErr("type conversion error from '%s' to '%v'", own.TypeName(), t)
}

func nativeErr(own *types.Type, t reflect.Type) error {
	return fmt.Errorf("type conversion error from '%s' to '%v'", own.TypeName(), t)
}

// Function bindings. cel-go only calls them with the declared argument
// types, but each still checks its arguments so that a misuse yields a CEL
// error rather than a panic.

func authorizerPath(recv, arg ref.Val) ref.Val {
	a, ok := recv.(authorizerVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	path, ok := arg.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	if strings.TrimSpace(string(path)) == "" {
		return types.NewErr("path must not be empty")
	}
	return pathCheckVal{subject: a.subject, path: string(path)}
}

func authorizerGroup(recv, arg ref.Val) ref.Val {
	a, ok := recv.(authorizerVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	group, ok := arg.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return groupCheckVal{subject: a.subject, group: string(group)}
}

func authorizerServiceAccount(args ...ref.Val) ref.Val {
	if len(args) != 3 {
		return types.NoSuchOverloadErr()
	}
	a, ok := args[0].(authorizerVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	namespace, ok := args[1].(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[1])
	}
	name, ok := args[2].(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[2])
	}
	// Name before namespace, as upstream.
	if errs := apimachineryvalidation.ValidateServiceAccountName(string(name), false); len(errs) > 0 {
		return types.NewErr("Invalid service account name")
	}
	if errs := apimachineryvalidation.ValidateNamespaceName(string(namespace), false); len(errs) > 0 {
		return types.NewErr("Invalid service account namespace")
	}
	// The service account replaces the whole user: no UID, no extra.
	return authorizerVal{subject: a.subject.withUser(authenticationv1.UserInfo{
		Username: "system:serviceaccount:" + string(namespace) + ":" + string(name),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + string(namespace)},
	})}
}

func groupCheckResource(recv, arg ref.Val) ref.Val {
	g, ok := recv.(groupCheckVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	resource, ok := arg.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	if strings.TrimSpace(string(resource)) == "" {
		return types.NewErr("resource must not be empty")
	}
	return resourceCheckVal{group: g, resource: string(resource)}
}

// resourceCheckSetter binds a ResourceCheck refinement that stores its
// string argument with set on a copy of the receiver.
func resourceCheckSetter(set func(r *resourceCheckVal, s string)) cel.OverloadOpt {
	return cel.BinaryBinding(func(recv, arg ref.Val) ref.Val {
		r, ok := recv.(resourceCheckVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(recv)
		}
		s, ok := arg.(types.String)
		if !ok {
			return types.MaybeNoSuchOverloadErr(arg)
		}
		set(&r, string(s))
		return r
	})
}

func pathCheckCheck(recv, arg ref.Val) ref.Val {
	p, ok := recv.(pathCheckVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	verb, ok := arg.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return p.subject.authorize(AuthzAttributes{
		Verb: string(verb),
		Path: p.path,
	})
}

func resourceCheckCheck(recv, arg ref.Val) ref.Val {
	r, ok := recv.(resourceCheckVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(recv)
	}
	verb, ok := arg.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(arg)
	}
	return r.group.subject.authorize(r.attributes(string(verb)))
}

// decisionAccessor binds a Decision accessor.
func decisionAccessor(get func(d decisionVal) ref.Val) cel.OverloadOpt {
	return cel.UnaryBinding(func(v ref.Val) ref.Val {
		d, ok := v.(decisionVal)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		return get(d)
	})
}

// NewCachingAuthorizer returns an Authorizer that remembers the outcome of
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
func NewCachingAuthorizer(a Authorizer) Authorizer {
	if a == nil {
		return nil
	}
	return &cachingAuthorizer{next: a, memo: make(map[string]cachedAuthz)}
}

type cachedAuthz struct {
	res AuthzResult
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

func newAuthzKey(a AuthzAttributes) (string, error) {
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
func (c *cachingAuthorizer) Authorize(ctx context.Context, a AuthzAttributes) (AuthzResult, error) {
	key, err := newAuthzKey(a)
	if err != nil {
		return AuthzResult{Decision: AuthzDecisionNoOpinion}, err
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
