package policy

import (
	"fmt"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/patchtypes"
	"github.com/vapkit/vapkit/policy/manifest"
)

// defaultedPolicy returns a copy of p with the defaults the API server
// stores for a v1 ValidatingAdmissionPolicy (failurePolicy Fail and, inside
// matchConstraints, matchPolicy Equivalent, empty selectors and rule scope
// "*"). Policies read by [manifest.Load] carry them already; policies built
// as Go structs usually do not. p is not modified.
func defaultedPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ValidatingAdmissionPolicy {
	p = p.DeepCopy()
	manifest.SetPolicyDefaults(p)
	return p
}

// defaultedBinding returns a copy of b with the defaults the API server
// stores for a v1 ValidatingAdmissionPolicyBinding (inside matchResources
// only). b is not modified.
func defaultedBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	b = b.DeepCopy()
	manifest.SetBindingDefaults(b)
	return b
}

// apiIssues returns what the API server's create validation would reject in
// a defaulted policy or binding, under root (such as
// validatingAdmissionPolicy[name]), leaving out what have already reports.
func apiIssues(root *field.Path, errs, have field.ErrorList) field.ErrorList {
	if len(errs) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(have))
	for _, e := range have {
		seen[e.Error()] = true
	}
	var out field.ErrorList
	for _, e := range errs {
		c := *e // the list is ours, but copy rather than rewrite in place
		if c.Field == "" || c.Field == "<nil>" {
			c.Field = root.String()
		} else {
			c.Field = root.String() + "." + c.Field
		}
		if !seen[c.Error()] {
			seen[c.Error()] = true
			out = append(out, &c)
		}
	}
	return out
}

// structuralOnly runs the API server's validation without compiling
// expressions again: Compile has compiled every expression already, in the
// environment the server evaluates stored policies with, and reports each
// failure under the same path. Compiling them a second time, in the
// stricter environment the server checks newly written expressions with,
// made Compile four times slower (BenchmarkCompile/100policies, 0.32 s to
// 1.25 s, on a loaded 2-core machine); typecheck.ValidatePolicy does that
// check for callers who want it.
type structuralOnly struct{}

func (structuralOnly) NewScope(bool) apivalidation.Scope { return structuralOnly{} }

func (structuralOnly) Compose() {}

func (structuralOnly) AddVariable(string, string, bool) error { return nil }

func (structuralOnly) Check(apivalidation.ExprKind, string, bool) error { return nil }

// namespaceLookupError is the trace's account of a failed namespace lookup;
// the denial itself keeps the lookup's status, as the API server's does.
func (e *Evaluator) namespaceLookupError(err error) error {
	if e.opts.Namespaces == nil {
		return fmt.Errorf("namespace lookup failed; request aborted: %w (%s)", err, noNamespacesHint)
	}
	return fmt.Errorf("namespace lookup failed; request aborted: %w", err)
}

// validationCompiler type-checks with check-only [celenv.Scope]s, as the
// API server checks new objects.
type validationCompiler struct{ env *celenv.Env }

func (c validationCompiler) NewScope(params bool) apivalidation.Scope {
	return &validationScope{env: c.env, params: params,
		s: c.env.NewScope(celenv.ScopeOptions{Params: params, CheckOnly: true, NoVariables: true})}
}

// validationScope checks without `variables` until Compose, then with it.
type validationScope struct {
	env      *celenv.Env
	params   bool
	composed bool
	s        *celenv.Scope
}

func (s *validationScope) Compose() {
	if !s.composed {
		s.composed = true
		s.s = s.env.NewScope(celenv.ScopeOptions{Params: s.params, CheckOnly: true})
	}
}

func (s *validationScope) AddVariable(name, expression string, stored bool) error {
	s.Compose()
	if err := s.s.WithMode(validationMode(stored)).AddVariable(name, expression).Err(); err != nil {
		return err
	}
	return nil
}

func (s *validationScope) Check(kind apivalidation.ExprKind, expression string, stored bool) error {
	d, want := celenv.Decls{Authorizer: true}, []*cel.Type{cel.BoolType}
	switch kind {
	case apivalidation.MessageExpression:
		d, want = celenv.Decls{}, []*cel.Type{cel.StringType}
	case apivalidation.AuditAnnotation:
		want = []*cel.Type{cel.StringType, cel.NullType}
	case apivalidation.ApplyConfiguration:
		d, want = celenv.Decls{Authorizer: true, PatchTypes: true}, []*cel.Type{patchtypes.ObjectType}
	case apivalidation.JSONPatch:
		d, want = celenv.Decls{Authorizer: true, PatchTypes: true}, []*cel.Type{patchtypes.JSONPatchListType}
	}
	if err := s.s.WithMode(validationMode(stored)).Compile(expression, d, want...).Err(); err != nil {
		return err
	}
	return nil
}

// validationMode is the environment the API server checks an expression
// in: StoredExpressions when the old object of an update held it.
func validationMode(stored bool) celenv.Mode {
	if stored {
		return celenv.StoredExpressions
	}
	return celenv.NewExpressions
}
