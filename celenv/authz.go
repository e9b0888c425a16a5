package celenv

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	authenticationv1 "k8s.io/api/authentication/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/vapkit/vapkit/celenv/authz"
)

// errNoAuthorizer is the error a check reports when no authz.Authorizer was given.
var errNoAuthorizer = errors.New("no authorizer configured")

// CEL types of the authorizer library; the names match apiserver's.
var (
	// authorizerType is the CEL type of the authorizer variable and of
	// authorizer.serviceAccount(...).
	authorizerType = cel.ObjectType("kubernetes.authorization.Authorizer")
	// pathCheckType is the CEL type returned by authorizer.path(...).
	pathCheckType = cel.ObjectType("kubernetes.authorization.PathCheck")
	// groupCheckType is the CEL type returned by authorizer.group(...).
	groupCheckType = cel.ObjectType("kubernetes.authorization.GroupCheck")
	// resourceCheckType is the CEL type of the authorizer.requestResource
	// variable and of GroupCheck.resource(...) and its refinements.
	resourceCheckType = cel.ObjectType("kubernetes.authorization.ResourceCheck")
	// decisionType is the CEL type returned by check(...).
	decisionType = cel.ObjectType("kubernetes.authorization.Decision")
)

// authzLibrary returns the CEL library of authorization checks (Kubernetes 1.27+),
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
func authzLibrary() cel.EnvOption {
	return cel.Lib(authzLib{})
}

// authzSelectorsLibrary returns the CEL library (Kubernetes 1.31+) that adds
// selectors to resource checks, as apiserver's library.AuthzSelectors. It
// needs authzLibrary.
//
//	<ResourceCheck>.fieldSelector(<string>) <ResourceCheck>
//	<ResourceCheck>.labelSelector(<string>) <ResourceCheck>
//
// The selector is parsed when the check runs. A selector that does not parse
// does not fail the expression: the check carries no requirements and the
// parse error is passed to the [authz.Authorizer] in [authz.Attributes].
func authzSelectorsLibrary() cel.EnvOption {
	return cel.Lib(authzSelectorsLib{})
}

type authzLib struct{}

// LibraryName makes the library a singleton, as upstream's.
func (authzLib) LibraryName() string { return "kubernetes.authz" }

func (authzLib) CompileOptions() []cel.EnvOption {
	str := cel.StringType
	return []cel.EnvOption{
		cel.Function("path", cel.MemberOverload("authorizer_path",
			[]*cel.Type{authorizerType, str}, pathCheckType, cel.BinaryBinding(authorizerPath))),
		cel.Function("group", cel.MemberOverload("authorizer_group",
			[]*cel.Type{authorizerType, str}, groupCheckType, cel.BinaryBinding(authorizerGroup))),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount",
			[]*cel.Type{authorizerType, str, str}, authorizerType, cel.FunctionBinding(authorizerServiceAccount))),
		cel.Function("resource", cel.MemberOverload("groupcheck_resource",
			[]*cel.Type{groupCheckType, str}, resourceCheckType, cel.BinaryBinding(groupCheckResource))),
		cel.Function("subresource", cel.MemberOverload("resourcecheck_subresource",
			[]*cel.Type{resourceCheckType, str}, resourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.subresource = s }))),
		cel.Function("namespace", cel.MemberOverload("resourcecheck_namespace",
			[]*cel.Type{resourceCheckType, str}, resourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.namespace = s }))),
		cel.Function("name", cel.MemberOverload("resourcecheck_name",
			[]*cel.Type{resourceCheckType, str}, resourceCheckType, resourceCheckSetter(func(r *resourceCheckVal, s string) { r.name = s }))),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{pathCheckType, str}, decisionType, cel.BinaryBinding(pathCheckCheck)),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{resourceCheckType, str}, decisionType, cel.BinaryBinding(resourceCheckCheck))),
		cel.Function("errored", cel.MemberOverload("decision_errored",
			[]*cel.Type{decisionType}, cel.BoolType, decisionAccessor(func(d decisionVal) ref.Val { return types.Bool(d.errored) }))),
		cel.Function("error", cel.MemberOverload("decision_error",
			[]*cel.Type{decisionType}, cel.StringType, decisionAccessor(func(d decisionVal) ref.Val { return types.String(d.errMsg) }))),
		cel.Function("allowed", cel.MemberOverload("decision_allowed",
			[]*cel.Type{decisionType}, cel.BoolType, decisionAccessor(func(d decisionVal) ref.Val { return types.Bool(d.decision == authz.Allow) }))),
		cel.Function("reason", cel.MemberOverload("decision_reason",
			[]*cel.Type{decisionType}, cel.StringType, decisionAccessor(func(d decisionVal) ref.Val { return types.String(d.reason) }))),
	}
}

func (authzLib) ProgramOptions() []cel.ProgramOption { return nil }

// authzSelectorsLib is the library behind authzSelectorsLibrary. inert:
// the selectors are accepted but never reach the authorizer, as in a 1.31
// API server, whose AuthorizeWithSelectors feature gate was alpha and off
// by default (k8s.io/apiserver v0.31.14 pkg/cel/library/authz.go applies
// the selectors only when the gate is on; 1.32 made it beta and on).
type authzSelectorsLib struct{ inert bool }

// LibraryName makes the library a singleton, as upstream's.
func (authzSelectorsLib) LibraryName() string { return "kubernetes.authzSelectors" }

func (l authzSelectorsLib) CompileOptions() []cel.EnvOption {
	str := cel.StringType
	field := func(r *resourceCheckVal, s string) { r.fieldSelector = s }
	label := func(r *resourceCheckVal, s string) { r.labelSelector = s }
	if l.inert {
		field = func(*resourceCheckVal, string) {}
		label = field
	}
	return []cel.EnvOption{
		cel.Function("fieldSelector", cel.MemberOverload("authorizer_fieldselector",
			[]*cel.Type{resourceCheckType, str}, resourceCheckType, resourceCheckSetter(field))),
		cel.Function("labelSelector", cel.MemberOverload("authorizer_labelselector",
			[]*cel.Type{resourceCheckType, str}, resourceCheckType, resourceCheckSetter(label))),
	}
}

func (authzSelectorsLib) ProgramOptions() []cel.ProgramOption { return nil }

// AuthorizerValues returns the values to bind to the `authorizer` and
// `authorizer.requestResource` variables ([Input].Authorizer and
// RequestResource) for one request: checks made as user with a, and a
// resource check for r, the resource as issued in the request.
//
// ctx is captured and passed to every Authorize call an expression makes,
// because cel-go function bindings receive no context. The values must
// therefore not outlive the request they were made for.
//
// A nil a is allowed: every check then yields a Decision with NoOpinion and
// the error "no authorizer configured". (Upstream always has an authorizer;
// callers that want upstream's behaviour without one leave the variables
// unbound, which makes uses fail with "no such attribute(s)".)
func AuthorizerValues(ctx context.Context, a authz.Authorizer, user authenticationv1.UserInfo, r authz.RequestResource) (authorizer, requestResource ref.Val) {
	s := &authzSubject{ctx: ctx, authorizer: a, user: user}
	return authorizerVal{subject: s}, resourceCheckVal{
		group:       groupCheckVal{subject: s, group: r.Group},
		resource:    r.Resource,
		subresource: r.Subresource,
		namespace:   r.Namespace,
		name:        r.Name,
	}
}

// authzSubject is who checks are made for and by whom they are decided. The
// values below refer to it by pointer, which keeps them comparable Go values
// (cel-go may use values as map keys) whatever the authz.Authorizer and user hold.
type authzSubject struct {
	// ctx is captured for the Authorize calls: cel-go bindings have no context.
	ctx        context.Context
	authorizer authz.Authorizer
	user       authenticationv1.UserInfo
}

// authorize runs a check for attrs, made by the subject's user. A nil
// subject (only possible for zero values) behaves as a missing authorizer.
func (s *authzSubject) authorize(attrs authz.Attributes) ref.Val {
	if s == nil || s.authorizer == nil {
		return newDecisionVal(authz.Result{Decision: authz.NoOpinion}, errNoAuthorizer)
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

func (authorizerVal) Type() ref.Type { return authorizerType }

// pathCheckVal is the CEL value of type kubernetes.authorization.PathCheck.
type pathCheckVal struct {
	opaqueVal
	subject *authzSubject
	path    string
}

func (pathCheckVal) Type() ref.Type { return pathCheckType }

// groupCheckVal is the CEL value of type kubernetes.authorization.GroupCheck.
type groupCheckVal struct {
	opaqueVal
	subject *authzSubject
	group   string
}

func (groupCheckVal) Type() ref.Type { return groupCheckType }

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

func (resourceCheckVal) Type() ref.Type { return resourceCheckType }

// attributes builds the attributes (all but the user) of a check of r with
// verb, as upstream's resourceCheckVal.Authorize: apiVersion "*", selectors
// parsed only when non-empty, parse failures handed over rather than
// reported.
func (r resourceCheckVal) attributes(verb string) authz.Attributes {
	attrs := authz.Attributes{
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
	decision authz.Decision
	reason   string
	errored  bool
	errMsg   string
}

func newDecisionVal(res authz.Result, err error) decisionVal {
	d := decisionVal{decision: res.Decision, reason: res.Reason}
	if err != nil {
		d.errored, d.errMsg = true, err.Error()
	}
	return d
}

func (decisionVal) Type() ref.Type { return decisionType }

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
	return convertOpaque(a, authorizerType, t)
}

func (p pathCheckVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(p, pathCheckType, t)
}

func (g groupCheckVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(g, groupCheckType, t)
}

func (r resourceCheckVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(r, resourceCheckType, t)
}

func (d decisionVal) ConvertToType(t ref.Type) ref.Val {
	return convertOpaque(d, decisionType, t)
}

// ConvertToNative of each value fails, naming its type, as upstream's.
func (authorizerVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(authorizerType, t)
}

func (pathCheckVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(pathCheckType, t)
}

func (groupCheckVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(groupCheckType, t)
}

func (resourceCheckVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(resourceCheckType, t)
}

func (decisionVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, nativeErr(decisionType, t)
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
	return p.subject.authorize(authz.Attributes{
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
