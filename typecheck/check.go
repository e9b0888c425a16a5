package typecheck

import (
	"errors"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/policy/manifest"
)

// MaxTypesToCheck is how many kinds one resource rule may contribute before
// the API server stops collecting kinds for a policy.
const MaxTypesToCheck = 10

// Options configure a [Checker]. The zero value checks against the
// built-in kinds and schemas of Kubernetes 1.37, as the API server does.
type Options struct {
	// Env provides the CEL libraries; nil: Kubernetes 1.37.
	Env *celenv.Env
	// Schemas resolves the schema of a kind; nil: [BuiltinResolver].
	Schemas SchemaResolver
	// Resources and CRDs say which kinds a policy's resource rules name;
	// set at most one of them, NewChecker fails when both are set.
	//
	// Resources maps resources to kinds, for example a meta.RESTMapper of
	// your cluster; nil: [manifest.NewResourceMapper], the resources a
	// kube-apiserver 1.37 serves by default. Warnings are then what the API
	// server writes when its schemas come from Schemas and its resources
	// from Resources.
	//
	// CRDs are apiextensions.k8s.io/v1 CustomResourceDefinitions (as
	// [manifest.Load] returns them) that the API server's built-in checking
	// never looks at. With CRDs, a policy is checked twice: once as the API
	// server does (Result.Warnings), then with the CRDs' kinds added to the
	// built-in resources and their openAPIV3Schemas added to Schemas; what
	// the second pass adds goes to Result.Extended.
	Resources KindMapper
	CRDs      []*unstructured.Unstructured
}

// Checker type-checks policies against kind schemas, reproducing the API
// server's ValidatingAdmissionPolicy type checker. It is immutable and safe
// for concurrent use.
type Checker struct {
	env      *celenv.Env
	resolver SchemaResolver
	kinds    KindMapper
	// extended is the second pass, with the CRDs' kinds and schemas; nil
	// without Options.CRDs.
	extended *Checker
}

// NewChecker returns a checker for opts. It fails when the environment
// cannot be built, when a CRD is malformed or defines a built-in kind, or
// when both opts.Resources and opts.CRDs are set.
func NewChecker(opts Options) (*Checker, error) {
	if opts.Resources != nil && len(opts.CRDs) > 0 {
		return nil, errors.New("typecheck: set Options.Resources or Options.CRDs, not both")
	}
	env := opts.Env
	if env == nil {
		var err error
		if env, err = celenv.New(celenv.Options{}); err != nil {
			return nil, err
		}
	}
	c := &Checker{env: env, resolver: opts.Schemas, kinds: opts.Resources}
	if c.resolver == nil {
		c.resolver = BuiltinResolver()
	}
	if c.kinds == nil {
		var err error
		if c.kinds, err = manifest.NewResourceMapper(); err != nil {
			return nil, err
		}
	}
	if len(opts.CRDs) == 0 {
		return c, nil
	}
	kinds, err := manifest.NewResourceMapper(opts.CRDs...)
	if err != nil {
		return nil, err
	}
	schemas, err := NewCRDResolver(opts.CRDs...)
	if err != nil {
		return nil, err
	}
	c.extended = &Checker{env: env, resolver: Combine(c.resolver, schemas), kinds: kinds}
	return c, nil
}

// Result is what [Checker.Check] finds in a policy.
type Result struct {
	// Warnings are exactly what the API server writes to
	// status.typeChecking.expressionWarnings, with the checker's schemas
	// and resources: one warning per validation expression or
	// messageExpression with issues, in validation order; nil when there
	// are none.
	Warnings []admissionregistrationv1.ExpressionWarning
	// Extended are warnings beyond upstream's built-in checking, in the
	// same format, when Options.CRDs were given: custom kinds matched by
	// the policy checked against their CRD's openAPIV3Schema, and kinds
	// checked with params typed by a custom paramKind's schema. Only
	// per-kind messages that Warnings does not already hold for the same
	// expression are listed.
	Extended []admissionregistrationv1.ExpressionWarning
}

// Check type-checks p the way the API server does. A nil p gives the zero
// Result.
//
// The kinds checked come from spec.matchConstraints.resourceRules: rules
// with a wildcard group or version are skipped; wildcard resources and
// subresources are dropped; each remaining group × version × resource (each
// list sorted) is mapped to its kinds, and once one rule has produced
// [MaxTypesToCheck] kinds the collection stops. Kinds are checked in group,
// version, kind order; kinds without a schema are skipped
// ([Checker.Unchecked] lists them). object and oldObject have the kind's
// type, params the paramKind's type (dyn when it has no schema), variables
// are compiled in order (their own issues are not reported), and authorizer
// is declared without authorizer.requestResource, as upstream.
//
// The warning text is, per kind with issues, "<group/version, Kind=Kind>:
// <cel issues>\n", joined with "\n". One difference: where upstream names
// the kind's types <Kind><nanoseconds> (for example in "found no matching
// overload" messages), vapkit uses the plain kind (Deployment.spec), or
// <Kind>Params for a paramKind of the same kind name as the checked kind
// but another group or version.
func (c *Checker) Check(p *admissionregistrationv1.ValidatingAdmissionPolicy) Result {
	up := c.results(p)
	if c.extended == nil {
		return Result{Warnings: format(up)}
	}
	more := c.extended.results(p)
	for i := range more {
		have := map[string]bool{}
		if i < len(up) {
			for _, g := range up[i].results {
				have[g.text] = true
			}
		}
		kept := more[i].results[:0]
		for _, g := range more[i].results {
			if !have[g.text] {
				kept = append(kept, g)
			}
		}
		more[i].results = kept
	}
	return Result{Warnings: format(up), Extended: format(more)}
}

// gvkResult is the outcome of checking one expression against one kind.
type gvkResult struct {
	gvk  schema.GroupVersionKind
	text string // "<gvk>: <issues>\n"
}

// exprResult collects the kinds for which one expression has issues.
type exprResult struct {
	fieldRef string
	results  []gvkResult
}

// kindType is a kind with its schema's CEL types.
type kindType struct {
	gvk   schema.GroupVersionKind
	types schemaTypes
}

func (c *Checker) results(p *admissionregistrationv1.ValidatingAdmissionPolicy) []exprResult {
	if p == nil {
		return nil
	}
	var kinds []kindType
	for _, gvk := range typesToCheck(p, c.kinds) {
		s, err := c.resolver.ResolveSchema(gvk)
		if err != nil || s == nil {
			continue
		}
		kinds = append(kinds, kindType{gvk: gvk, types: declare(s, gvk.Kind)})
	}
	paramGVK, hasParams := paramsGVK(p)
	var paramSchema *spec.Schema
	if hasParams {
		if ps, err := c.resolver.ResolveSchema(paramGVK); err == nil {
			paramSchema = ps
		}
	}

	var out []exprResult
	var exprs []string
	path := field.NewPath("spec", "validations")
	for i, v := range p.Spec.Validations {
		out = append(out, exprResult{fieldRef: path.Index(i).Child("expression").String()})
		exprs = append(exprs, v.Expression)
		if v.MessageExpression != "" {
			out = append(out, exprResult{fieldRef: path.Index(i).Child("messageExpression").String()})
			exprs = append(exprs, v.MessageExpression)
		}
	}
	for _, k := range kinds {
		scope := c.scope(k, paramGVK, hasParams, paramSchema)
		for _, v := range p.Spec.Variables {
			scope.AddVariable(v.Name, v.Expression)
		}
		results := make([]gvkResult, len(exprs))
		for j, expr := range exprs {
			if err := scope.Compile(expr, celenv.Decls{Authorizer: true}).Err(); err != nil {
				if err.Issues == nil {
					// The API server skips a kind whose compiler cannot
					// be built.
					results = nil
					break
				}
				results[j] = gvkResult{gvk: k.gvk, text: fmt.Sprintf("%v: %s\n", k.gvk, err.Issues.String())}
			}
		}
		for j, r := range results {
			if r.text != "" {
				out[j].results = append(out[j].results, r)
			}
		}
	}
	return out
}

// scope builds the typed environment for one kind. The params types are
// named after the paramKind's kind, or <Kind>Params when that name is the
// checked kind's but the kinds differ; for the same kind they are shared.
func (c *Checker) scope(k kindType, paramGVK schema.GroupVersionKind, hasParams bool, paramSchema *spec.Schema) *celenv.Scope {
	d := &celenv.TypedDecls{Object: k.types.root, Types: k.types.objects}
	switch {
	case paramSchema == nil:
	case paramGVK == k.gvk:
		d.ParamType = k.types.root
	default:
		name := paramGVK.Kind
		if name == k.gvk.Kind {
			name += "Params"
		}
		pt := declare(paramSchema, name)
		d.ParamType = pt.root
		d.Types = append(append([]celenv.ObjectType(nil), d.Types...), pt.objects...)
	}
	return c.env.NewScope(celenv.ScopeOptions{Params: paramsDeclared(c.env.Version(), hasParams, paramSchema), Typed: d})
}

// paramsDeclared reports whether `params` is declared when checking a
// policy: from 1.36 whenever it has a paramKind; up to 1.35 only when the
// paramKind's schema resolved, so that without one every use of params is
// an undeclared reference (k8s.io/apiserver v0.35.10 vs v0.36.6
// validating/typechecking.go, hasParams).
func paramsDeclared(v celenv.Version, hasParams bool, paramSchema *spec.Schema) bool {
	if v < celenv.Version1_36 {
		return hasParams && paramSchema != nil
	}
	return hasParams
}

// paramsGVK returns the paramKind's kind; false when the policy has none or
// its apiVersion does not parse (params are then not declared at all).
func paramsGVK(p *admissionregistrationv1.ValidatingAdmissionPolicy) (schema.GroupVersionKind, bool) {
	if p.Spec.ParamKind == nil {
		return schema.GroupVersionKind{}, false
	}
	gv, err := schema.ParseGroupVersion(p.Spec.ParamKind.APIVersion)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	gvk := gv.WithKind(p.Spec.ParamKind.Kind)
	return gvk, !gvk.Empty()
}

// typesToCheck lists the kinds the policy's resource rules name, sorted.
func typesToCheck(p *admissionregistrationv1.ValidatingAdmissionPolicy, m KindMapper) []schema.GroupVersionKind {
	mc := p.Spec.MatchConstraints
	if mc == nil || len(mc.ResourceRules) == 0 || m == nil {
		return nil
	}
	seen := map[schema.GroupVersionKind]bool{}
	var gvks []schema.GroupVersionKind
	done := func() []schema.GroupVersionKind {
		if len(gvks) == 0 {
			return nil
		}
		sortGVKs(gvks)
		return gvks
	}
	for _, rule := range mc.ResourceRules {
		groups, ok := withoutWildcards(rule.APIGroups)
		if !ok || len(groups) == 0 {
			continue
		}
		versions, ok := withoutWildcards(rule.APIVersions)
		if !ok || len(versions) == 0 {
			continue
		}
		var resources []string
		for _, r := range rule.Resources {
			if !strings.ContainsAny(r, "*/") {
				resources = append(resources, r)
			}
		}
		if len(resources) == 0 {
			continue
		}
		sortStrings(groups)
		sortStrings(versions)
		sortStrings(resources)
		count := 0
		for _, g := range groups {
			for _, v := range versions {
				for _, r := range resources {
					kinds, err := m.KindsFor(schema.GroupVersionResource{Group: g, Version: v, Resource: r})
					if err != nil {
						continue
					}
					for _, k := range kinds {
						if k.Empty() {
							continue
						}
						if !seen[k] {
							seen[k] = true
							gvks = append(gvks, k)
						}
						count++
						if count == MaxTypesToCheck {
							return done()
						}
					}
				}
			}
		}
	}
	return done()
}

// withoutWildcards copies l; false when an entry contains "*".
func withoutWildcards(l []string) ([]string, bool) {
	out := make([]string, 0, len(l))
	for _, s := range l {
		if strings.Contains(s, "*") {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func sortStrings(l []string) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j] < l[j-1]; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// format turns results into ExpressionWarnings.
func format(rs []exprResult) []admissionregistrationv1.ExpressionWarning {
	var out []admissionregistrationv1.ExpressionWarning
	for _, r := range rs {
		if len(r.results) == 0 {
			continue
		}
		texts := make([]string, len(r.results))
		for i, g := range r.results {
			texts[i] = g.text
		}
		out = append(out, admissionregistrationv1.ExpressionWarning{FieldRef: r.fieldRef, Warning: strings.Join(texts, "\n")})
	}
	return out
}
