package policy

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/internal/apivalidation"
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
