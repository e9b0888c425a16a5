package typecheckdiff

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	aggregatoropenapi "k8s.io/kube-aggregator/pkg/generated/openapi"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// Checker runs vapkit's and upstream's type checkers over the same built-in
// schemas and resources. It is safe for concurrent use.
type Checker struct {
	vapkit   *typecheck.Checker
	upstream *validating.TypeChecker
	// typeName matches an upstream schema type name: a built-in kind
	// followed by digits.
	typeName *regexp.Regexp
}

// NewChecker returns a checker for Kubernetes 1.37 with the built-in
// schemas embedded in vapkit and the resources of [manifest.NewResourceMapper].
func NewChecker() (*Checker, error) {
	kinds, lookup, err := typecheck.BuiltinDefinitions()
	if err != nil {
		return nil, err
	}
	mapper, err := manifest.NewResourceMapper()
	if err != nil {
		return nil, err
	}
	vk, err := typecheck.NewChecker(typecheck.Options{Resources: mapper})
	if err != nil {
		return nil, err
	}
	return &Checker{
		vapkit: vk,
		upstream: &validating.TypeChecker{
			SchemaResolver: &definitionsResolver{kinds: kinds, lookup: lookup, decoded: servedOutsideAPI()},
			RestMapper:     kindsOnlyMapper{kinds: mapper},
		},
		typeName: typeNamePattern(kinds),
	}, nil
}

// Vapkit returns vapkit's warnings for p, as [typecheck.Checker.Check] writes them.
func (c *Checker) Vapkit(p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	return c.vapkit.Check(p).Warnings
}

// Upstream returns the warnings upstream's validating.TypeChecker writes
// for p, type names with their nanosecond suffixes.
func (c *Checker) Upstream(p *admissionregistrationv1.ValidatingAdmissionPolicy) []admissionregistrationv1.ExpressionWarning {
	if p == nil {
		return nil
	}
	return c.upstream.Check(p)
}

// Comparison is the outcome of [Checker.Compare].
type Comparison struct {
	// Vapkit and Upstream are each side's warnings after [Normalize].
	Vapkit, Upstream []admissionregistrationv1.ExpressionWarning
	// Diff is empty when the two agree, otherwise a cmp.Diff of Vapkit
	// (-) against Upstream (+).
	Diff string
}

// Compare checks p with both checkers and compares the normalised warnings.
func (c *Checker) Compare(p *admissionregistrationv1.ValidatingAdmissionPolicy) Comparison {
	v := c.Normalize(p, c.Vapkit(p))
	u := c.Normalize(p, c.Upstream(p))
	return Comparison{Vapkit: v, Upstream: u, Diff: cmp.Diff(v, u)}
}

// Normalize returns a copy of ws in which every built-in kind followed by
// digits (upstream's type names) loses the digits, and, when p's paramKind
// is a built-in kind, <Kind>Params (vapkit's name for a paramKind named like
// the checked kind) becomes <Kind>. It is applied to both sides alike.
func (c *Checker) Normalize(p *admissionregistrationv1.ValidatingAdmissionPolicy, ws []admissionregistrationv1.ExpressionWarning) []admissionregistrationv1.ExpressionWarning {
	if ws == nil {
		return nil
	}
	var params *regexp.Regexp
	if p != nil && p.Spec.ParamKind != nil && p.Spec.ParamKind.Kind != "" {
		params = regexp.MustCompile(`\b(` + regexp.QuoteMeta(p.Spec.ParamKind.Kind) + `)Params\b`)
	}
	out := make([]admissionregistrationv1.ExpressionWarning, len(ws))
	for i, w := range ws {
		text := c.typeName.ReplaceAllString(w.Warning, "$1")
		if params != nil {
			text = params.ReplaceAllString(text, "$1")
		}
		out[i] = admissionregistrationv1.ExpressionWarning{FieldRef: w.FieldRef, Warning: text}
	}
	return out
}

// typeNamePattern matches any of the kinds followed by digits, longest kind
// first so that PodTemplate123 is not read as Pod.
func typeNamePattern(kinds map[schema.GroupVersionKind]string) *regexp.Regexp {
	seen := map[string]bool{}
	var names []string
	for gvk := range kinds {
		if !seen[gvk.Kind] {
			seen[gvk.Kind] = true
			names = append(names, regexp.QuoteMeta(gvk.Kind))
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) > len(names[j])
		}
		return names[i] < names[j]
	})
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)[0-9]+\b`)
}

// definitionsResolver is the upstream side's schema resolver: vapkit's
// embedded definitions, with $refs inlined by upstream's PopulateRefs.
type definitionsResolver struct {
	kinds  map[schema.GroupVersionKind]string
	lookup func(string) (*spec.Schema, bool)

	mu      sync.Mutex
	decoded map[string]*spec.Schema // definitions decoded so far; never modified
}

// ResolveSchema implements resolver.SchemaResolver.
func (r *definitionsResolver) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	name, ok := r.kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("cannot resolve %v: %w", gvk, resolver.ErrSchemaNotFound)
	}
	return resolver.PopulateRefs(r.definition, name)
}

// definition decodes a definition once and shares it afterwards, as the API
// server shares its generated definitions; PopulateRefs copies what it
// changes.
func (r *definitionsResolver) definition(name string) (*spec.Schema, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.decoded[name]; ok {
		return s, true
	}
	s, ok := r.lookup(name)
	if ok {
		r.decoded[name] = s
	}
	return s, ok
}

// servedOutsideAPI returns the definitions of the API groups a
// kube-apiserver serves from outside k8s.io/api (apiextensions.k8s.io and
// apiregistration.k8s.io) as their own modules generate them, descriptions
// included, so that the upstream side type-checks those kinds against
// upstream's schemas rather than vapkit's embedded copy.
func servedOutsideAPI() map[string]*spec.Schema {
	out := map[string]*spec.Schema{}
	for _, get := range []func(common.ReferenceCallback) map[string]common.OpenAPIDefinition{
		apiextensionsopenapi.GetOpenAPIDefinitions,
		aggregatoropenapi.GetOpenAPIDefinitions,
	} {
		for name, def := range get(spec.MustCreateRef) {
			if strings.HasPrefix(name, "io.k8s.apiextensions-apiserver.") || strings.HasPrefix(name, "io.k8s.kube-aggregator.") {
				s := def.Schema
				out[name] = &s
			}
		}
	}
	return out
}

// kindsOnlyMapper is a meta.RESTMapper whose KindsFor answers are vapkit's;
// every other question (the type checker asks none) gets "no match".
type kindsOnlyMapper struct {
	meta.MultiRESTMapper
	kinds typecheck.KindMapper
}

// KindsFor implements meta.RESTMapper.
func (m kindsOnlyMapper) KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return m.kinds.KindsFor(gvr)
}
