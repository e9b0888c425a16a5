// Compilation of MutatingAdmissionPolicies and their bindings.

package policy

import (
	"cmp"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/mutation"
	"github.com/vapkit/vapkit/internal/patchtypes"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy/manifest"
)

// compiledMutating is one MutatingAdmissionPolicy. Its matching, params,
// variables and match conditions are those of a ValidatingAdmissionPolicy,
// so base holds them as a validating policy with no validations, and the
// same stages serve both.
type compiledMutating struct {
	base *compiledPolicy
	// matcher is base's compiled matchConstraints.
	matcher   *matching.Matcher
	policy    *admissionregistrationv1.MutatingAdmissionPolicy
	bindings  []*mutatingBinding
	mutations []compiledMutation
	// ifNeeded: reinvocationPolicy is exactly IfNeeded; anything else is
	// Never, as upstream treats it.
	ifNeeded bool
}

// mutatingBinding is a MutatingAdmissionPolicyBinding, with the validating
// form that matching and params read.
type mutatingBinding struct {
	binding *admissionregistrationv1.MutatingAdmissionPolicyBinding
	base    *admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// matcher is base's compiled matchResources.
	matcher *matching.Matcher
}

// compiledMutation is one entry of spec.mutations. prog is nil when the
// patch type is unknown or its expression struct is missing: the API
// server then compiles no patcher and fails the policy with a 500.
type compiledMutation struct {
	path      *field.Path
	patchType admissionregistrationv1.PatchType
	prog      *celenv.Program
}

// validatingForm returns the parts of a MutatingAdmissionPolicy that a
// validating policy shares, with the API server's v1 defaults.
func validatingForm(p *admissionregistrationv1.MutatingAdmissionPolicy) *admissionregistrationv1.ValidatingAdmissionPolicy {
	c := p.DeepCopy()
	v := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:        c.Spec.ParamKind,
			MatchConstraints: c.Spec.MatchConstraints,
			FailurePolicy:    c.Spec.FailurePolicy,
			MatchConditions:  c.Spec.MatchConditions,
			Variables:        c.Spec.Variables,
		},
	}
	return defaultedPolicy(v)
}

// validatingBindingForm returns the parts of a binding that a validating
// binding shares, with the API server's v1 defaults.
func validatingBindingForm(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	c := b.DeepCopy()
	return defaultedBinding(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:     c.Spec.PolicyName,
			ParamRef:       c.Spec.ParamRef,
			MatchResources: c.Spec.MatchResources,
		},
	})
}

// compileMutating compiles Options.MutatingPolicies and attaches
// Options.MutatingBindings; errs are the entries Compile refuses (nil
// entries, duplicate names).
func (e *Evaluator) compileMutating() field.ErrorList {
	var errs field.ErrorList
	if len(e.opts.MutatingPolicies) == 0 && len(e.opts.MutatingBindings) == 0 {
		return nil
	}
	tc, err := mutation.Builtin()
	if err == nil {
		tc, err = tc.WithCRDs(e.opts.CRDs)
	}
	if err != nil {
		// Without schemas every mutation is answered as the API server
		// answers a kind missing from its OpenAPI document (503).
		e.issues = append(e.issues, field.Invalid(field.NewPath("options", "crds"), "", err.Error()))
	} else {
		e.converters = tc
	}
	byName := map[string]*compiledMutating{}
	for i, p := range e.opts.MutatingPolicies {
		path := field.NewPath("mutatingPolicies").Index(i)
		if p == nil {
			errs = append(errs, field.Required(path, "policy must not be nil"))
			continue
		}
		if _, dup := byName[p.Name]; dup {
			errs = append(errs, field.Duplicate(path.Child("metadata", "name"), p.Name))
			continue
		}
		if cm := e.compileMutatingPolicy(p); cm != nil {
			byName[p.Name] = cm
		}
	}
	seen := map[string]bool{}
	for i, b := range e.opts.MutatingBindings {
		path := field.NewPath("mutatingBindings").Index(i)
		if b == nil {
			errs = append(errs, field.Required(path, "binding must not be nil"))
			continue
		}
		if seen[b.Name] {
			errs = append(errs, field.Duplicate(path.Child("metadata", "name"), b.Name))
			continue
		}
		seen[b.Name] = true
		db := b.DeepCopy()
		manifest.SetMutatingBindingDefaults(db)
		e.issues = append(e.issues, apiIssues(field.NewPath("mutatingAdmissionPolicyBinding").Key(b.Name), apivalidation.ValidateMutatingBinding(db), nil)...)
		cm, ok := byName[b.Spec.PolicyName]
		if !ok {
			e.issues = append(e.issues, field.NotFound(field.NewPath("mutatingAdmissionPolicyBinding").Key(b.Name).Child("spec", "policyName"), b.Spec.PolicyName))
			continue
		}
		cm.bindings = append(cm.bindings, &mutatingBinding{binding: b, base: validatingBindingForm(b)})
	}
	for _, cm := range byName {
		if len(cm.bindings) == 0 {
			continue
		}
		slices.SortFunc(cm.bindings, func(a, b *mutatingBinding) int { return cmp.Compare(a.binding.Name, b.binding.Name) })
		e.mutating = append(e.mutating, cm)
	}
	slices.SortFunc(e.mutating, func(a, b *compiledMutating) int { return cmp.Compare(a.policy.Name, b.policy.Name) })
	// Selectors compiled once, equal ones shared, as for the validating
	// policies: no label selector is parsed per request.
	set := matching.NewMatcherSet()
	for _, cm := range e.mutating {
		cm.matcher = set.Policy(cm.base.policy)
		for _, b := range cm.bindings {
			b.matcher = set.Binding(b.base)
		}
	}
	e.mutatingMatchers = set
	e.mutatingScratches.New = func() any { return set.NewScratch() }
	return errs
}

// compileMutatingPolicy compiles one policy in the API server's order:
// variables, match conditions, then mutations with the patch types
// declared. It returns nil for a policy the server drops (an unparsable
// paramKind apiVersion).
func (e *Evaluator) compileMutatingPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) *compiledMutating {
	root := field.NewPath("mutatingAdmissionPolicy").Key(p.Name)
	base, issues := e.compilePolicyAt(root, validatingForm(p))
	e.issues = append(e.issues, issues...)
	dp := p.DeepCopy()
	manifest.SetMutatingPolicyDefaults(dp)
	e.issues = append(e.issues, apiIssues(root, apivalidation.ValidateMutatingPolicy(structuralOnly{}, dp, nil), issues)...)
	if base == nil {
		return nil
	}
	cm := &compiledMutating{base: base, policy: p, ifNeeded: p.Spec.ReinvocationPolicy == admissionregistrationv1.IfNeededReinvocationPolicy}
	decls := celenv.Decls{Authorizer: true, PatchTypes: true}
	for i, m := range p.Spec.Mutations {
		cmu := compiledMutation{patchType: m.PatchType}
		var member string
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			member = "applyConfiguration"
			cmu.prog = base.scope.Compile(m.ApplyConfiguration.Expression, decls, patchtypes.ObjectType)
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			member = "jsonPatch"
			cmu.prog = base.scope.Compile(m.JSONPatch.Expression, decls, patchtypes.JSONPatchListType)
		default:
			e.issues = append(e.issues, field.Invalid(root.Child("spec", "mutations").Index(i).Child("patchType"), string(m.PatchType),
				"no patch is compiled for this mutation; the API server fails every request the policy matches"))
		}
		if cmu.prog != nil {
			cmu.path = field.NewPath("spec", "mutations").Index(i).Child(member, "expression")
			if err := cmu.prog.Err(); err != nil {
				e.issues = append(e.issues, field.Invalid(root.Child("spec", "mutations").Index(i).Child(member, "expression"), cmu.prog.Expression(), err.Detail))
			}
			base.readsAuthorizer = base.readsAuthorizer || cmu.prog.ReadsAuthorizer()
		}
		cm.mutations = append(cm.mutations, cmu)
	}
	return cm
}
