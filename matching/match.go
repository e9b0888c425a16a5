package matching

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Attributes describe one admission request as matching sees it. Only the
// fields below are read; none is modified.
type Attributes struct {
	// Operation is CREATE, UPDATE, DELETE or CONNECT.
	Operation string
	// Resource is the resource as requested, without subresource.
	Resource schema.GroupVersionResource
	// SubResource is the subresource as requested ("" for the main resource).
	SubResource string
	// Kind is the kind of the object as requested.
	Kind schema.GroupVersionKind
	// Name is the object name; it may be empty for a CREATE relying on
	// generateName, in which case rules with resourceNames never match.
	Name string
	// Namespace is the request namespace, "" for cluster-scoped resources.
	// For a core/v1 namespaces request it is the namespace's own name, as
	// the API server sets it.
	Namespace string
	// Object and OldObject are the new and old objects; either may be nil.
	// Labels are read with meta.Accessor, so typed objects and
	// *unstructured.Unstructured both work.
	Object, OldObject runtime.Object
}

// NamespaceGetter looks up namespaces for namespaceSelector evaluation.
//
// GetNamespace must return a k8s.io/apimachinery/pkg/api/errors NotFound
// error, as errors.NewNotFound(schema.GroupResource{Resource: "namespaces"},
// name) builds it, when the namespace does not exist. Implementations must be
// safe for concurrent use and must not expect the returned namespace to be
// modified.
type NamespaceGetter interface {
	GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
}

// NamespaceGetterFunc adapts a function to [NamespaceGetter].
type NamespaceGetterFunc func(ctx context.Context, name string) (*corev1.Namespace, error)

// GetNamespace calls f(ctx, name).
func (f NamespaceGetterFunc) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	return f(ctx, name)
}

// Options carry the server services matching depends on. The zero value is
// valid.
type Options struct {
	// Namespaces looks up the namespace of a namespaced request when a
	// non-empty namespaceSelector must be evaluated. Nil: every lookup fails
	// with a NotFound error (namespaces "x" not found).
	Namespaces NamespaceGetter
	// Resources maps a resource to the resources sharing its storage and
	// gives their kinds, for matchPolicy Equivalent.
	// runtime.NewEquivalentResourceRegistry builds one. Nil: matchPolicy
	// Equivalent behaves like Exact.
	Resources runtime.EquivalentResourceMapper
}

// Result is the outcome of a successful match evaluation.
type Result struct {
	// Matched reports whether the MatchResources select the request.
	Matched bool
	// Resource is the resource the request matched as: the requested
	// resource, or for matchPolicy Equivalent the equivalent resource named
	// by the matching rule. Zero when Matched is false.
	Resource schema.GroupVersionResource
	// Kind is the kind belonging to Resource (and the request subresource),
	// the kind the object must be converted to before evaluation. Zero when
	// Matched is false.
	Kind schema.GroupVersionKind
}

// errNilSelectorFormat is the API server's message for a selector left nil
// in a policy or binding (generic/policy_matcher.go).
const errNilSelectorFormat = "a nil %s selector was passed, please ensure selectors are initialized properly"

var (
	errNoConstraints = errors.New("policy contained no match constraints, a required field")
	errNilAttributes = errors.New("matching: nil Attributes")
	errNilMatch      = errors.New("matching: nil MatchResources")
	errNilPolicy     = errors.New("matching: nil ValidatingAdmissionPolicy")
	errNilBinding    = errors.New("matching: nil ValidatingAdmissionPolicyBinding")
)

// Match reports whether mr selects the request a, and as which resource and
// kind, following the API server's Matcher.Matches.
//
// A request matches when the namespaceSelector and objectSelector select it,
// no excludeResourceRules rule matches it, and either resourceRules is empty
// or one of its rules matches. A nil selector selects nothing (as
// metav1.LabelSelectorAsSelector(nil)), except that a namespaceSelector is
// not consulted for cluster-scoped objects other than namespaces; [MatchPolicy]
// and [MatchBinding] reject nil selectors before calling Match.
//
// Errors from the selectors are returned only when the rules match; errors
// from equivalent-resource matching (unable to convert to ...: unknown kind)
// are returned when the selectors do not rule the request out. On error the
// Result is zero. Match returns an error for nil mr or nil a.
func Match(ctx context.Context, mr *admissionregistrationv1.MatchResources, a *Attributes, o Options) (Result, error) {
	if mr == nil {
		return Result{}, errNilMatch
	}
	if a == nil {
		return Result{}, errNilAttributes
	}

	// The API server evaluates the selectors first and holds their errors
	// back until the rules have matched. Evaluating the rules first gives
	// the same result for every input (a request the rules reject without
	// error is unmatched whatever the selectors say) and saves namespace
	// lookups for policies that do not apply.
	res, ruleErr := matchRules(mr, a, o.Resources)
	if ruleErr == nil && !res.Matched {
		return Result{}, nil
	}

	nsMatched, nsErr := matchNamespaceSelector(ctx, mr.NamespaceSelector, a, o.Namespaces)
	if !nsMatched && nsErr == nil {
		return Result{}, nil
	}
	objMatched, objErr := matchObjectSelector(mr.ObjectSelector, a)
	if !objMatched && objErr == nil {
		return Result{}, nil
	}
	switch {
	case ruleErr != nil:
		return Result{}, ruleErr
	case nsErr != nil:
		return Result{}, nsErr
	case objErr != nil:
		return Result{}, objErr
	}
	return res, nil
}

// MatchPolicy reports whether the policy p applies to the request a, as the
// API server's DefinitionMatches: a nil spec.matchConstraints or a nil
// namespaceSelector or objectSelector in it is an error for every request
// (policy contained no match constraints, a required field; a nil namespace
// selector was passed, ...). Otherwise it returns [Match] of the
// matchConstraints. MatchPolicy returns an error for nil p.
func MatchPolicy(ctx context.Context, p *admissionregistrationv1.ValidatingAdmissionPolicy, a *Attributes, o Options) (Result, error) {
	if p == nil {
		return Result{}, errNilPolicy
	}
	mr := p.Spec.MatchConstraints
	if mr == nil {
		return Result{}, errNoConstraints
	}
	if err := checkSelectors(mr); err != nil {
		return Result{}, err
	}
	return Match(ctx, mr, a, o)
}

// MatchBinding reports whether the binding b applies to the request a, as
// the API server's BindingMatches: a nil spec.matchResources matches every
// request; a nil namespaceSelector or objectSelector inside it is an error;
// otherwise the result is that of [Match], whose matched resource and kind
// are discarded because the policy's are used for evaluation. MatchBinding
// returns an error for nil b.
func MatchBinding(ctx context.Context, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, a *Attributes, o Options) (bool, error) {
	if b == nil {
		return false, errNilBinding
	}
	mr := b.Spec.MatchResources
	if mr == nil {
		return true, nil
	}
	if err := checkSelectors(mr); err != nil {
		return false, err
	}
	res, err := Match(ctx, mr, a, o)
	if err != nil {
		return false, err
	}
	return res.Matched, nil
}

// checkSelectors returns the API server's error for a nil selector, namespace
// first.
func checkSelectors(mr *admissionregistrationv1.MatchResources) error {
	if mr.NamespaceSelector == nil {
		return fmt.Errorf(errNilSelectorFormat, "namespace")
	}
	if mr.ObjectSelector == nil {
		return fmt.Errorf(errNilSelectorFormat, "object")
	}
	return nil
}
