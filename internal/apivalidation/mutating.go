package apivalidation

import (
	"reflect"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	genericvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kinds of mutation expressions.
const (
	// ApplyConfiguration expressions must evaluate to Object; the
	// authorizer and the mutation types are declared.
	ApplyConfiguration ExprKind = iota + 100
	// JSONPatch expressions must evaluate to list(JSONPatch); the
	// authorizer and the mutation types are declared.
	JSONPatch
)

// Values the API server accepts, sorted as its error messages list them.
var (
	supportedMutatingOperations   = []string{"*", "CONNECT", "CREATE", "UPDATE"}
	supportedReinvocationPolicies = []string{"IfNeeded", "Never"}
	supportedPatchTypes           = []string{"ApplyConfiguration", "JSONPatch"}
)

// ValidateMutatingPolicy returns the errors the API server's validation
// reports for a MutatingAdmissionPolicy, with upstream's field paths and
// messages, in upstream's order (validateMutatingAdmissionPolicySpec and
// validateMutation in k8s.io/kubernetes pkg/apis/admissionregistration/
// validation). p, and old when not nil, must carry the API server's
// defaults; neither is modified. A nil old validates a create. On update,
// match conditions are not validated when neither they nor paramKind
// changed, and an expression old already held is checked in the
// StoredExpressions environment. Mutation expressions of both patch types
// are looked up among old's applyConfiguration expressions only: upstream
// files old's JSON patch expressions in a set of their own that
// validateJSONPatch never reads (it reads the applyConfiguration set).
// Variables and mutations compile with `variables` declared even when the
// policy has none (upstream's MAP validation always composes), so a
// reference to an undeclared variable is "undefined field", not
// "undeclared reference".
func ValidateMutatingPolicy(c Compiler, p, old *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	if p == nil {
		return field.ErrorList{field.Required(nil, "a MutatingAdmissionPolicy is required")}
	}
	var stored storedExpressions
	skipMatchConditions := false
	mutations := map[string]bool{}
	if old != nil {
		stored.matchConditions = map[string]bool{}
		for _, mc := range old.Spec.MatchConditions {
			stored.matchConditions[mc.Expression] = true
		}
		for _, m := range old.Spec.Mutations {
			if m.ApplyConfiguration != nil {
				mutations[m.ApplyConfiguration.Expression] = true
			}
		}
		skipMatchConditions = reflect.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
			reflect.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
	}
	errs := genericvalidation.ValidateObjectMeta(&p.ObjectMeta, false, genericvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	path := field.NewPath("spec")
	spec := &p.Spec
	if spec.FailurePolicy == nil {
		errs = append(errs, field.Required(path.Child("failurePolicy"), ""))
	} else if !isOneOf(string(*spec.FailurePolicy), supportedFailurePolicies) {
		errs = append(errs, field.NotSupported(path.Child("failurePolicy"), *spec.FailurePolicy, supportedFailurePolicies))
	}
	hasParams := spec.ParamKind != nil
	if hasParams {
		errs = append(errs, validateParamKind(spec.ParamKind, path.Child("paramKind"))...)
	}
	if spec.MatchConstraints == nil {
		errs = append(errs, field.Required(path.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, validateMatchResources(spec.MatchConstraints, path.Child("matchConstraints"))...)
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			errs = append(errs, field.Required(path.Child("matchConstraints", "resourceRules"), ""))
		}
		errs = append(errs, mutatingOperations(spec.MatchConstraints, path.Child("matchConstraints", "resourceRules", "operations"))...)
	}
	scope := c.NewScope(hasParams)
	if !skipMatchConditions {
		errs = append(errs, validateMatchConditions(scope, spec.MatchConditions, stored.matchConditions, path.Child("matchConditions"))...)
	}
	// Match conditions compile statelessly; everything after them in a
	// composing scope, variables or not (createCompiler(true)).
	scope.Compose()
	for i := range spec.Variables {
		// Variables are looked up among validation expressions, which a
		// mutating policy has none of.
		errs = append(errs, validateVariable(scope, &spec.Variables[i], nil, path.Child("variables").Index(i))...)
	}
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(path.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		errs = append(errs, validateMutation(scope, &spec.Mutations[i], mutations, path.Child("mutations").Index(i))...)
	}
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(path.Child("reinvocationPolicy"), ""))
	} else if !isOneOf(string(spec.ReinvocationPolicy), supportedReinvocationPolicies) {
		errs = append(errs, field.NotSupported(path.Child("reinvocationPolicy"), spec.ReinvocationPolicy, supportedReinvocationPolicies))
	}
	return errs
}

// mutatingOperations refuses operations a mutating policy cannot match
// (DELETE), at the index-less path upstream reports.
func mutatingOperations(m *admissionregistrationv1.MatchResources, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range m.ResourceRules {
		for _, op := range r.Operations {
			if !slices.Contains(supportedMutatingOperations, string(op)) {
				errs = append(errs, field.NotSupported(path, op, supportedMutatingOperations))
			}
		}
	}
	return errs
}

// validateMutation checks one mutation: its patch type, the union of
// applyConfiguration and jsonPatch, and the expression, trimmed.
func validateMutation(scope Scope, m *admissionregistrationv1.Mutation, stored map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(expression string, kind ExprKind, p *field.Path) {
		trimmed := strings.TrimSpace(expression)
		if trimmed == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		} else if err := scope.Check(kind, trimmed, stored[expression]); err != nil {
			errs = append(errs, compileError(p.Child("expression"), trimmed, err))
		}
	}
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(path.Child("patchType"), ""))
	case admissionregistrationv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(path.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			check(m.JSONPatch.Expression, JSONPatch, path.Child("jsonPatch"))
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(path.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(path.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			check(m.ApplyConfiguration.Expression, ApplyConfiguration, path.Child("applyConfiguration"))
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(path.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("patchType"), m.PatchType, supportedPatchTypes))
	}
	return errs
}

// ValidateMutatingBinding returns the errors the API server's validation
// reports for a MutatingAdmissionPolicyBinding, on create and update alike
// (validateMutatingAdmissionPolicyBindingSpec): policyName, paramRef,
// matchResources (under its correctly spelt path) and the operations a
// mutating policy may match. b must carry the API server's defaults.
func ValidateMutatingBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	if b == nil {
		return field.ErrorList{field.Required(nil, "a MutatingAdmissionPolicyBinding is required")}
	}
	errs := genericvalidation.ValidateObjectMeta(&b.ObjectMeta, false, genericvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	if b.Spec.PolicyName == "" {
		errs = append(errs, field.Required(spec.Child("policyName"), ""))
	} else {
		for _, msg := range genericvalidation.NameIsDNSSubdomain(b.Spec.PolicyName, false) {
			errs = append(errs, field.Invalid(spec.Child("policyName"), b.Spec.PolicyName, msg))
		}
	}
	errs = append(errs, validateParamRef(b.Spec.ParamRef, spec.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(b.Spec.MatchResources, spec.Child("matchResources"))...)
	if b.Spec.MatchResources != nil {
		errs = append(errs, mutatingOperations(b.Spec.MatchResources, spec.Child("matchResources", "resourceRules", "operations"))...)
	}
	return errs
}
