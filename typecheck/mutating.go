package typecheck

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/exprcheck"
	"github.com/vapkit/vapkit/policy/manifest"
)

// ValidateMutatingPolicy returns the errors the API server's create
// validation reports for a MutatingAdmissionPolicy, with upstream's field
// paths and messages, in upstream's order (validateMutatingAdmissionPolicy
// in k8s.io/kubernetes pkg/apis/admissionregistration/validation): among
// others "mutations must contain at least one item", the patchType union
// ("must be specified when patchType is JSONPatch", "{applyConfiguration}":
// "must not be specified when patchType is JSONPatch"), DELETE refused at
// spec.matchConstraints.resourceRules.operations, a required
// reinvocationPolicy, and the expressions type-checked as the server checks
// them: mutations with Object, JSONPatch and jsonpatch.escapeKey declared
// and their result type required ("must evaluate to Object but got
// string"), variables and match conditions without them.
//
// As [ValidatePolicy]: expressions compile in env's NewExpressions
// environment, p is defaulted on a copy first, a nil env selects the default
// version and a nil p is a Required error at the root.
func ValidateMutatingPolicy(env *celenv.Env, p *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	return ValidateMutatingPolicyUpdate(env, p, nil)
}

// ValidateMutatingPolicyUpdate returns the errors the API server's update
// validation reports when old is replaced by p: expressions old already held
// compile in the StoredExpressions environment (mutation expressions of
// both patch types are looked up among old's applyConfiguration
// expressions, as upstream's validateJSONPatch does), and match conditions
// are skipped when neither they nor paramKind changed. A nil old makes it
// [ValidateMutatingPolicy].
func ValidateMutatingPolicyUpdate(env *celenv.Env, p, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	if p == nil {
		return apivalidation.ValidateMutatingPolicy(nil, nil, nil)
	}
	if env == nil {
		var err error
		if env, err = celenv.New(celenv.Options{}); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
	}
	p = p.DeepCopy()
	manifest.SetMutatingPolicyDefaults(p)
	if old != nil {
		old = old.DeepCopy()
		manifest.SetMutatingPolicyDefaults(old)
	}
	return apivalidation.ValidateMutatingPolicy(exprcheck.Compiler(env), p, old)
}

// ValidateMutatingBinding returns the errors the API server's validation
// reports for a MutatingAdmissionPolicyBinding, on create and update alike
// (validateMutatingAdmissionPolicyBinding): policyName, paramRef,
// matchResources (spelt correctly, unlike the validating binding's path) and
// DELETE refused at spec.matchResources.resourceRules.operations. b is
// defaulted on a copy first; a nil b is a Required error at the root.
func ValidateMutatingBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	if b != nil {
		b = b.DeepCopy()
		manifest.SetMutatingBindingDefaults(b)
	}
	return apivalidation.ValidateMutatingBinding(b)
}
