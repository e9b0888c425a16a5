package typecheck

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/apivalidation"
	"github.com/vapkit/vapkit/internal/exprcheck"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Limits of the API server's policy validation
// (k8s.io/kubernetes pkg/apis/admissionregistration/validation).
const (
	// MaxMatchConditions is the most match conditions a policy may have.
	MaxMatchConditions = apivalidation.MaxMatchConditions
	// MaxAuditAnnotations is the most audit annotations a policy may have.
	MaxAuditAnnotations = apivalidation.MaxAuditAnnotations
	// MaxAuditAnnotationValueExpressionLength is the longest valueExpression,
	// in bytes after trimming white space, that a policy may have.
	MaxAuditAnnotationValueExpressionLength = apivalidation.MaxAuditAnnotationValueExpressionLength
)

// ValidatePolicy returns the errors the API server's create validation
// reports for p, with upstream's field paths and messages, in upstream's
// order (validateValidatingAdmissionPolicy in k8s.io/kubernetes
// pkg/apis/admissionregistration/validation). An empty list means the API
// server of env's version would accept p.
//
// Expressions are compiled in env's [celenv.NewExpressions] environment, that
// is with the libraries of the previous minor version, which is what a
// server accepts in new objects; Options.Extra of env play no part (see
// a check-only [celenv.Scope]). A nil env selects the default version.
//
// p is first defaulted, on a copy, as the API server defaults a v1 object
// before it validates it (failurePolicy Fail, matchPolicy Equivalent, empty
// selectors, rule scope "*"), so fields with defaults are never reported as
// missing. p itself is not modified. A nil p is reported as a Required
// error at the root.
//
// The ".static.k8s.io" name reservation of the alpha
// ManifestBasedAdmissionControlConfig feature is not checked.
func ValidatePolicy(env *celenv.Env, p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	return ValidatePolicyUpdate(env, p, nil)
}

// ValidatePolicyUpdate returns the errors the API server's update validation
// reports when old is replaced by p (ValidateValidatingAdmissionPolicyUpdate).
// It differs from [ValidatePolicy] as upstream does:
//
//   - An expression that old already held is compiled in env's
//     [celenv.StoredExpressions] environment, so an update that leaves it
//     unchanged stays valid after an upgrade. Expressions are compared by
//     kind (match conditions with match conditions, and so on); variables
//     are compared with old's validation expressions, as upstream does.
//   - Match conditions are not validated at all when neither they nor
//     paramKind changed.
//
// A nil old makes it [ValidatePolicy]. The registry's generic checks of
// metadata updates (immutable name, uid and so on) are not included.
func ValidatePolicyUpdate(env *celenv.Env, p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	if p == nil {
		return apivalidation.ValidatePolicy(nil, nil, nil)
	}
	if env == nil {
		var err error
		if env, err = celenv.New(celenv.Options{}); err != nil {
			return field.ErrorList{field.InternalError(nil, err)}
		}
	}
	p = p.DeepCopy()
	manifest.SetPolicyDefaults(p)
	if old != nil {
		old = old.DeepCopy()
		manifest.SetPolicyDefaults(old)
	}
	return apivalidation.ValidatePolicy(exprcheck.Compiler(env), p, old)
}

// ValidateBinding returns the errors the API server's validation reports for
// b, on create and on update alike, with upstream's field paths and messages
// (validateValidatingAdmissionPolicyBinding). Like upstream, errors of
// spec.matchResources are reported under the misspelt path
// "spec.matchResouces".
//
// b is first defaulted, on a copy, as the API server does (only inside a
// non-nil matchResources); paramRef.parameterNotFoundAction has no default
// in v1 and is required whenever paramRef is set. A nil b is reported as a
// Required error at the root. Whether the named policy exists is not
// checked, as the API server does not check it either.
func ValidateBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	if b != nil {
		b = b.DeepCopy()
		manifest.SetBindingDefaults(b)
	}
	return apivalidation.ValidateBinding(b)
}
