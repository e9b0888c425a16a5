package policy

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/celenv/authz"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
)

// Options configure [Compile]. The zero value is valid: every nil field has
// the documented fallback. Options are read during Compile only.
type Options struct {
	// Env is the CEL environment; nil means celenv.New(celenv.Options{}),
	// Kubernetes 1.37.
	Env *celenv.Env
	// Params supplies parameter objects; nil behaves as an empty store, so
	// bindings with a paramRef find nothing.
	Params params.Source
	// Namespaces looks up the Namespace of every namespaced request a
	// binding matches, for namespaceSelector and namespaceObject, as the
	// API server does before it evaluates a binding. A Namespace it does
	// not return (a NotFound error or nil) denies the request with the
	// server's exact answer, 404 `namespaces "prod" not found`, whatever
	// the failurePolicy; any other error denies it with that error. Nil
	// fails every lookup so: supply the namespaces your requests are in,
	// with [matching.NewNamespaceMap] for a fixed set or an
	// informer-backed getter in a cluster (examples/controller).
	// [Evaluator.Issues] reports a nil getter under options.namespaces,
	// and the decision's trace names the missing Namespace.
	Namespaces matching.NamespaceGetter
	// Authorizer answers the authorizer library's checks; nil makes every
	// check report the error "no authorizer configured".
	Authorizer authz.Authorizer
	// Resources and CRDs say which kinds and resources exist; set at most
	// one of them, Compile fails when both are set. Resources maps kinds to
	// resources and knows which resources are equivalent; nil means
	// [manifest.NewResourceMapper] of CRDs: the built-in kinds of
	// Kubernetes 1.37 plus the kinds of CRDs (apiextensions.k8s.io/v1
	// CustomResourceDefinitions), all served versions of one CRD being
	// equivalent resources. To combine your own mapper with CRDs, make it
	// answer for them.
	Resources ResourceMapper
	CRDs      []*unstructured.Unstructured
	// TraceUnmatched lists every policy in Decision.Trace, including the
	// ones a request's group, resource and operation rule out before any
	// evaluation, and every binding of the policies its rules select. By
	// default those are left out, as are the policies that the namespace's
	// or the object's labels rule out for all of their bindings (a policy
	// bound to other tenants), so that a request costs the same however
	// many unrelated policies are loaded; everything that is considered,
	// evaluated, skipped or ignored is always traced.
	TraceUnmatched bool
	// MeasureCost evaluates every expression with cost tracking, so that
	// Decision.Trace reports measured costs. By default an expression runs
	// untracked, two to three times faster, when its estimated worst-case
	// cost for the sizes of the request's inputs keeps every limit out of
	// reach; the decision is the same either way, and the trace then
	// reports the estimate (ExprTrace.CostEstimated).
	MeasureCost bool
	// Converter converts objects to the version a policy matched with
	// matchPolicy Equivalent. Nil: custom resources are converted by
	// rewriting apiVersion (the CRD "None" strategy) and other objects fail
	// to convert.
	Converter Converter
	// MutatingPolicies and MutatingBindings are the
	// MutatingAdmissionPolicies (admissionregistration.k8s.io/v1) and their
	// bindings. Evaluate runs them before the validating policies, as the
	// API server's admission chain does: matching, params, match
	// conditions and failurePolicy as for validating policies, mutations
	// in order, reinvocation per reinvocationPolicy; the validating
	// policies see the mutated object. They are defaulted as the API
	// server stores them; nil: no mutating phase.
	MutatingPolicies []*admissionregistrationv1.MutatingAdmissionPolicy
	MutatingBindings []*admissionregistrationv1.MutatingAdmissionPolicyBinding
}

// ResourceMapper knows the resources behind kinds and which resources share
// storage. [manifest.ResourceMapper] implements it for the built-in kinds
// and a set of CRDs; implementations must be safe for concurrent use.
type ResourceMapper interface {
	runtime.EquivalentResourceMapper
	// ResourceFor returns the resource serving kind and whether it is
	// namespaced; an error when the kind is unknown.
	ResourceFor(kind schema.GroupVersionKind) (resource schema.GroupVersionResource, namespaced bool, err error)
}

// Converter converts an object to another version of its kind.
// Implementations must be safe for concurrent use and must not modify obj.
type Converter interface {
	Convert(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)
}

// ConverterFunc adapts a function to [Converter].
type ConverterFunc func(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error)

// Convert calls f(obj, to).
func (f ConverterFunc) Convert(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	return f(obj, to)
}

// apiVersionConverter converts custom resources the way the API server's
// "None" conversion strategy does: only apiVersion changes.
type apiVersionConverter struct{}

func (apiVersionConverter) Convert(obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("no conversion from %T to %v is configured", obj, to)
	}
	out := u.DeepCopy()
	out.SetAPIVersion(to.GroupVersion().String())
	return out, nil
}
