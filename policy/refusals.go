package policy

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/exprcheck"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Refusal is one reason the API server would not let a cluster be set up
// from some manifests: an object it would refuse to create, or a binding
// that would bind nothing.
type Refusal struct {
	// Kind and Name identify the object, e.g. ValidatingAdmissionPolicy
	// and "max-replicas".
	Kind, Name string
	// Object is the refused object, as given to [Refusals].
	Object runtime.Object
	// Err is the problem, its field path relative to the object
	// (spec.validations[0].expression), its text the API server's.
	Err *field.Error
}

// Error renders the refusal as
// `ValidatingAdmissionPolicy "p": spec.validations[0].expression: Invalid value: ...`.
func (r Refusal) Error() string {
	return fmt.Sprintf("%s %q: %v", r.Kind, r.Name, r.Err)
}

// Refusals lists what the API server of env's version would refuse in m,
// so that a test does not pass on a cluster that cannot exist. It is the
// one notion of "the server would refuse this" shared by [Tester] and the
// test runner of examples/review and examples/vapkit:
//
//   - policies and bindings that fail the API server's create validation,
//     as [github.com/vapkit/vapkit/typecheck.ValidatePolicy] and
//     [github.com/vapkit/vapkit/typecheck.ValidateBinding] report it, with
//     expressions compiled in env's [celenv.NewExpressions] environment
//     (what a server of that version accepts in new objects);
//   - a second policy or binding of a name already given (the server
//     answers AlreadyExists);
//   - a binding whose policy m does not hold. The server creates such a
//     binding, but it enforces nothing, so a test of it would pass
//     vacuously;
//   - the same for MutatingAdmissionPolicies and their bindings, as
//     [github.com/vapkit/vapkit/typecheck.ValidateMutatingPolicy] and
//     [github.com/vapkit/vapkit/typecheck.ValidateMutatingBinding] report
//     them.
//
// Decoding problems (unknown fields, wrong types, kinds no server serves)
// are refused earlier, by [manifest.Load]. A nil env selects the default
// version. The result is in input order: validating policies, their
// bindings, mutating policies, their bindings; it is nil
// when nothing would be refused. m is not modified.
func Refusals(env *celenv.Env, m *manifest.Set) []Refusal {
	if m == nil {
		return nil
	}
	if env == nil {
		var err error
		if env, err = celenv.New(celenv.Options{}); err != nil {
			return []Refusal{{Err: field.InternalError(nil, err)}}
		}
	}
	out := validatingRefusals(env, m)
	return append(out, mutatingRefusals(env, m)...)
}

// validatingRefusals are the refusals of m's ValidatingAdmissionPolicies
// and their bindings.
func validatingRefusals(env *celenv.Env, m *manifest.Set) []Refusal {
	var out []Refusal
	policies := make(map[string]bool, len(m.Policies))
	for _, p := range m.Policies {
		if p == nil {
			continue
		}
		add := func(e *field.Error) {
			out = append(out, Refusal{Kind: "ValidatingAdmissionPolicy", Name: p.Name, Object: p, Err: e})
		}
		if policies[p.Name] {
			add(field.Duplicate(field.NewPath("metadata", "name"), p.Name))
		}
		policies[p.Name] = true
		dp := defaultedPolicy(p)
		dp.Namespace = "" // the server drops a cluster-scoped object's namespace
		for _, e := range apivalidation.ValidatePolicy(exprcheck.Compiler(env), dp, nil) {
			add(e)
		}
	}
	bindings := make(map[string]bool, len(m.Bindings))
	for _, b := range m.Bindings {
		if b == nil {
			continue
		}
		add := func(e *field.Error) {
			out = append(out, Refusal{Kind: "ValidatingAdmissionPolicyBinding", Name: b.Name, Object: b, Err: e})
		}
		if bindings[b.Name] {
			add(field.Duplicate(field.NewPath("metadata", "name"), b.Name))
		}
		bindings[b.Name] = true
		db := defaultedBinding(b)
		db.Namespace = ""
		for _, e := range apivalidation.ValidateBinding(db) {
			add(e)
		}
		if b.Spec.PolicyName != "" && !policies[b.Spec.PolicyName] {
			add(unboundPolicy("ValidatingAdmissionPolicy", b.Spec.PolicyName))
		}
	}
	return out
}

// mutatingRefusals are the refusals of m's MutatingAdmissionPolicies and
// their bindings, by the same rules as the validating ones'.
func mutatingRefusals(env *celenv.Env, m *manifest.Set) []Refusal {
	var out []Refusal
	policies := make(map[string]bool, len(m.MutatingPolicies))
	for _, p := range m.MutatingPolicies {
		if p == nil {
			continue
		}
		add := func(e *field.Error) {
			out = append(out, Refusal{Kind: "MutatingAdmissionPolicy", Name: p.Name, Object: p, Err: e})
		}
		if policies[p.Name] {
			add(field.Duplicate(field.NewPath("metadata", "name"), p.Name))
		}
		policies[p.Name] = true
		dp := p.DeepCopy()
		manifest.SetMutatingPolicyDefaults(dp)
		dp.Namespace = ""
		for _, e := range apivalidation.ValidateMutatingPolicy(exprcheck.Compiler(env), dp, nil) {
			add(e)
		}
	}
	bindings := make(map[string]bool, len(m.MutatingBindings))
	for _, b := range m.MutatingBindings {
		if b == nil {
			continue
		}
		add := func(e *field.Error) {
			out = append(out, Refusal{Kind: "MutatingAdmissionPolicyBinding", Name: b.Name, Object: b, Err: e})
		}
		if bindings[b.Name] {
			add(field.Duplicate(field.NewPath("metadata", "name"), b.Name))
		}
		bindings[b.Name] = true
		db := b.DeepCopy()
		manifest.SetMutatingBindingDefaults(db)
		db.Namespace = ""
		for _, e := range apivalidation.ValidateMutatingBinding(db) {
			add(e)
		}
		if b.Spec.PolicyName != "" && !policies[b.Spec.PolicyName] {
			add(unboundPolicy("MutatingAdmissionPolicy", b.Spec.PolicyName))
		}
	}
	return out
}

// unboundPolicy is the refusal of a binding whose policy is not given.
func unboundPolicy(kind, name string) *field.Error {
	e := field.NotFound(field.NewPath("spec", "policyName"), name)
	e.Detail = "no such " + kind + " is given; the binding would enforce nothing"
	return e
}

// refusalsError joins refusals into one error, for [NewTester].
func refusalsError(rs []Refusal) error {
	errs := make([]error, len(rs))
	for i, r := range rs {
		errs[i] = r
	}
	return fmt.Errorf("the API server would refuse: %w", errors.Join(errs...))
}
