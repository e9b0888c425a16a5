package apivalidation

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	genericvalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits of the API server's policy validation
// (k8s.io/kubernetes pkg/apis/admissionregistration/validation).
const (
	// MaxMatchConditions is the most match conditions a policy may have.
	MaxMatchConditions = 64
	// MaxAuditAnnotations is the most audit annotations a policy may have.
	MaxAuditAnnotations = 20
	// MaxAuditAnnotationValueExpressionLength is the longest valueExpression,
	// in bytes after trimming white space, that a policy may have.
	MaxAuditAnnotationValueExpressionLength = 5 * 1024
)

// ExprKind says which field of a policy an expression comes from, which
// decides its declarations and the result type it must have.
type ExprKind int

const (
	// MatchCondition expressions must be bool; the authorizer is declared.
	MatchCondition ExprKind = iota
	// Validation expressions must be bool; the authorizer is declared.
	Validation
	// MessageExpression expressions must be string; no authorizer.
	MessageExpression
	// AuditAnnotation value expressions must be string or null; the
	// authorizer is declared.
	AuditAnnotation
)

// Scope type-checks the expressions of one policy in the order the API
// server's validation does. stored tells whether the old object of an
// update already held the expression, in which case the server checks it in
// its StoredExpressions environment instead of its NewExpressions one. The
// returned error's text is the server's detail, such as "compilation
// failed: ERROR: <input>:1:8: ..."; nil means the expression is accepted.
type Scope interface {
	// Compose declares `variables`, with no fields yet, for the
	// expressions checked afterwards.
	Compose()
	// AddVariable composes, checks a variable's expression and declares
	// variables.<name> for the expressions checked after it.
	AddVariable(name, expression string, stored bool) error
	// Check type-checks one expression of the given kind.
	Check(kind ExprKind, expression string, stored bool) error
}

// Compiler starts the type-checking of one policy; params says whether the
// policy has a paramKind. It keeps this package free of the CEL environment:
// the public packages that own one (typecheck, policy) adapt it.
type Compiler interface {
	NewScope(params bool) Scope
}

// ValidatePolicy returns the errors the API server's validation reports for
// p, with upstream's field paths and messages, in upstream's order
// (validateValidatingAdmissionPolicy and
// ValidateValidatingAdmissionPolicyUpdate in k8s.io/kubernetes
// pkg/apis/admissionregistration/validation). p, and old when it is not nil,
// must already carry the API server's defaults; neither is modified. A nil
// old validates a create. On update:
//
//   - An expression that old already held is checked with stored true, so
//     an update that leaves it unchanged stays valid after an upgrade.
//     Expressions are compared by kind (match conditions with match
//     conditions, and so on); variables are compared with old's validation
//     expressions, as upstream does.
//   - Match conditions are not validated at all when neither they nor
//     paramKind changed.
//
// A nil p is reported as a Required error at the root.
func ValidatePolicy(c Compiler, p, old *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	if p == nil {
		return field.ErrorList{field.Required(nil, "a ValidatingAdmissionPolicy is required")}
	}
	opts := policyOptions{}
	if old != nil {
		opts.stored = storedExpressionsOf(old)
		opts.skipMatchConditions = reflect.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
			reflect.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
	}
	return validatePolicy(c, p, opts)
}

// ValidateBinding returns the errors the API server's validation reports for
// b, on create and on update alike, with upstream's field paths and messages
// (validateValidatingAdmissionPolicyBinding). Like upstream, errors of
// spec.matchResources are reported under the misspelt path
// "spec.matchResouces". b must already carry the API server's defaults; it
// is not modified. A nil b is reported as a Required error at the root.
func ValidateBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	if b == nil {
		return field.ErrorList{field.Required(nil, "a ValidatingAdmissionPolicyBinding is required")}
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
	// Upstream's path really is spelt "matchResouces".
	errs = append(errs, validateMatchResources(b.Spec.MatchResources, spec.Child("matchResouces"))...)
	return append(errs, validateValidationActions(b.Spec.ValidationActions, spec.Child("validationActions"))...)
}

// policyOptions are the differences between create and update validation.
type policyOptions struct {
	// skipMatchConditions leaves match conditions unvalidated.
	skipMatchConditions bool
	// stored holds the expressions of the old object, by kind.
	stored storedExpressions
}

// storedExpressions are the expressions an old object held; the same text in
// the same kind of field is compiled in the StoredExpressions environment.
type storedExpressions struct {
	matchConditions, validations, messageExpressions, auditAnnotations map[string]bool
}

func storedExpressionsOf(old *admissionregistrationv1.ValidatingAdmissionPolicy) storedExpressions {
	s := storedExpressions{
		matchConditions:    map[string]bool{},
		validations:        map[string]bool{},
		messageExpressions: map[string]bool{},
		auditAnnotations:   map[string]bool{},
	}
	for _, mc := range old.Spec.MatchConditions {
		s.matchConditions[mc.Expression] = true
	}
	for _, v := range old.Spec.Validations {
		s.validations[v.Expression] = true
		if v.MessageExpression != "" {
			s.messageExpressions[v.MessageExpression] = true
		}
	}
	for _, a := range old.Spec.AuditAnnotations {
		s.auditAnnotations[a.ValueExpression] = true
	}
	return s
}

// validatePolicy validates a defaulted policy.
func validatePolicy(c Compiler, p *admissionregistrationv1.ValidatingAdmissionPolicy, opts policyOptions) field.ErrorList {
	errs := genericvalidation.ValidateObjectMeta(&p.ObjectMeta, false, genericvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validatePolicySpec(c, p.Name, &p.Spec, opts, field.NewPath("spec"))...)
}

func validatePolicySpec(c Compiler, name string, spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, opts policyOptions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
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
		// The resource rules give the type checker its types, so a policy
		// needs at least one.
		if len(spec.MatchConstraints.ResourceRules) == 0 {
			errs = append(errs, field.Required(path.Child("matchConstraints", "resourceRules"), ""))
		}
	}

	// One scope serves the whole policy. Match conditions come first, while
	// `variables` is still undeclared: upstream compiles them statelessly.
	scope := c.NewScope(hasParams)
	if !opts.skipMatchConditions {
		errs = append(errs, validateMatchConditions(scope, spec.MatchConditions, opts.stored.matchConditions, path.Child("matchConditions"))...)
	}
	if len(spec.Variables) > 0 {
		scope.Compose()
		for i := range spec.Variables {
			errs = append(errs, validateVariable(scope, &spec.Variables[i], opts.stored.validations, path.Child("variables").Index(i))...)
		}
	}
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs,
			field.Required(path.Child("validations"), msg),
			field.Required(path.Child("auditAnnotations"), msg))
	}
	for i := range spec.Validations {
		errs = append(errs, validateValidation(scope, &spec.Validations[i], opts.stored, path.Child("validations").Index(i))...)
	}
	if len(spec.AuditAnnotations) > MaxAuditAnnotations {
		errs = append(errs, field.Invalid(path.Child("auditAnnotations"), internalAuditAnnotations(spec.AuditAnnotations),
			fmt.Sprintf("must not have more than %d auditAnnotations", MaxAuditAnnotations)))
	}
	keys := map[string]bool{}
	for i := range spec.AuditAnnotations {
		a := &spec.AuditAnnotations[i]
		p := path.Child("auditAnnotations").Index(i)
		errs = append(errs, validateAuditAnnotation(scope, name, a, opts.stored.auditAnnotations, p)...)
		if keys[a.Key] {
			errs = append(errs, field.Duplicate(p.Child("key"), a.Key))
		}
		keys[a.Key] = true
	}
	return errs
}

// validateParamKind checks apiVersion and kind as upstream's validateParamKind,
// which follows the APIService group and version rules.
func validateParamKind(pk *admissionregistrationv1.ParamKind, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	apiVersion := path.Child("apiVersion")
	if pk.APIVersion == "" {
		errs = append(errs, field.Required(apiVersion, ""))
	} else if group, version, err := splitGroupVersion(pk.APIVersion); err != nil {
		errs = append(errs, field.Invalid(apiVersion, pk.APIVersion, err.Error()))
	} else {
		if group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(apiVersion, group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(apiVersion, pk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(apiVersion, version, strings.Join(msgs, ",")))
		}
	}
	kind := path.Child("kind")
	if pk.Kind == "" {
		errs = append(errs, field.Required(kind, ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(kind, pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

// splitGroupVersion splits "group/version" as upstream's parseGroupVersion:
// "" and "/" give two empty parts, a string without "/" is a version, more
// than one "/" is an error.
func splitGroupVersion(gv string) (group, version string, err error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		group, version, _ = strings.Cut(gv, "/")
		return group, version, nil
	default:
		return "", "", errors.New("unexpected GroupVersion string: " + gv)
	}
}

// validateMatchConditions checks the match conditions of a policy. They are
// compiled before any variable, so `variables` is undeclared for them.
func validateMatchConditions(scope Scope, mcs []admissionregistrationv1.MatchCondition, stored map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(mcs) > MaxMatchConditions {
		errs = append(errs, field.TooMany(path, len(mcs), MaxMatchConditions))
	}
	names := map[string]bool{}
	for i := range mcs {
		mc := &mcs[i]
		p := path.Index(i)
		// Upstream compiles the trimmed text, and so reports columns within
		// it, and looks the trimmed text up among the old expressions.
		if expr := strings.TrimSpace(mc.Expression); expr == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		} else if err := scope.Check(MatchCondition, expr, stored[expr]); err != nil {
			errs = append(errs, compileError(p.Child("expression"), expr, err))
		}
		if mc.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, validateQualifiedName(mc.Name, p.Child("name"))...)
		}
		if mc.Name != "" {
			if names[mc.Name] {
				errs = append(errs, field.Duplicate(p.Child("name"), mc.Name))
			}
			names[mc.Name] = true
		}
	}
	return errs
}

// validateVariable checks one variable and declares it for the expressions
// after it. Upstream decides its environment by looking it up among the old
// object's validation expressions, not its variables.
func validateVariable(scope Scope, v *admissionregistrationv1.Variable, storedValidations map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Name) == "" {
		errs = append(errs, field.Required(path.Child("name"), "name is not specified"))
	} else if !isCELIdentifier(v.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), v.Name, "must be a valid CEL identifier"))
	}
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
	} else if err := scope.AddVariable(v.Name, v.Expression, storedValidations[v.Expression]); err != nil {
		errs = append(errs, compileError(path.Child("expression"), v.Expression, err))
	}
	return errs
}

// validateValidation checks one validation: its expression, messageExpression
// (compiled without the authorizer), message and reason.
func validateValidation(scope Scope, v *admissionregistrationv1.Validation, stored storedExpressions, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
	} else if err := scope.Check(Validation, v.Expression, stored.validations[v.Expression]); err != nil {
		errs = append(errs, compileError(path.Child("expression"), v.Expression, err))
	}
	if v.MessageExpression != "" && strings.TrimSpace(v.MessageExpression) == "" {
		errs = append(errs, field.Invalid(path.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if v.MessageExpression != "" {
		// The untrimmed text is compiled, so that columns match the field.
		if err := scope.Check(MessageExpression, v.MessageExpression, stored.messageExpressions[v.MessageExpression]); err != nil {
			errs = append(errs, compileError(path.Child("messageExpression"), v.MessageExpression, err))
		}
	}
	msg := strings.TrimSpace(v.Message)
	if v.Message != "" && msg == "" {
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must be non-empty if specified"))
	} else if strings.ContainsAny(msg, "\n\r") {
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !isOneOf(string(*v.Reason), supportedReasons) {
		errs = append(errs, field.NotSupported(path.Child("reason"), *v.Reason, supportedReasons))
	}
	return errs
}

// validateAuditAnnotation checks one audit annotation of the policy named
// policyName.
func validateAuditAnnotation(scope Scope, policyName string, a *admissionregistrationv1.AuditAnnotation, stored map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policyName != "" {
		// The annotation is recorded as "<policy>/<key>", which must be a
		// qualified name; the error shows the combined text.
		errs = append(errs, validateQualifiedName(policyName+"/"+a.Key, path.Child("key"))...)
	} else {
		errs = append(errs, field.Invalid(path.Child("key"), a.Key, "requires metadata.name be non-empty"))
	}
	p := path.Child("valueExpression")
	trimmed := strings.TrimSpace(a.ValueExpression)
	switch {
	case trimmed == "":
		errs = append(errs, field.Required(p, "valueExpression is not specified"))
	case len(trimmed) > MaxAuditAnnotationValueExpressionLength:
		// Upstream reports the length limit as a Required error.
		errs = append(errs, field.Required(p, fmt.Sprintf("must not exceed %d bytes in length", MaxAuditAnnotationValueExpressionLength)))
	default:
		// Upstream compiles the trimmed text but reports, and looks up
		// among the old expressions, the text as written.
		if err := scope.Check(AuditAnnotation, trimmed, stored[a.ValueExpression]); err != nil {
			errs = append(errs, compileError(p, a.ValueExpression, err))
		}
	}
	return errs
}

// internalAuditAnnotation renders like upstream's internal AuditAnnotation
// type, which has no JSON tags, in an error's value.
type internalAuditAnnotation struct {
	Key             string
	ValueExpression string
}

func internalAuditAnnotations(as []admissionregistrationv1.AuditAnnotation) []internalAuditAnnotation {
	out := make([]internalAuditAnnotation, len(as))
	for i, a := range as {
		out[i] = internalAuditAnnotation{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return out
}

// validateParamRef checks a binding's paramRef; nil is valid.
func validateParamRef(pr *admissionregistrationv1.ParamRef, path *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	const exclusive = "name and selector are mutually exclusive"
	if pr.Name != "" {
		for _, msg := range validatePathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(path.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(path.Child("name"), exclusive))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, validateLabelSelector(pr.Selector, path.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(path.Child("selector"), exclusive))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(path, "one of name or selector must be specified"))
	}
	p := path.Child("parameterNotFoundAction")
	if pr.ParameterNotFoundAction == nil || *pr.ParameterNotFoundAction == "" {
		errs = append(errs, field.Required(p, ""))
	} else if a := *pr.ParameterNotFoundAction; a != admissionregistrationv1.DenyAction && a != admissionregistrationv1.AllowAction {
		// Upstream lists Deny before Allow here, unsorted.
		errs = append(errs, field.NotSupported(p, pr.ParameterNotFoundAction,
			[]string{string(admissionregistrationv1.DenyAction), string(admissionregistrationv1.AllowAction)}))
	}
	return errs
}

// validateValidationActions checks a binding's validationActions.
func validateValidationActions(actions []admissionregistrationv1.ValidationAction, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[admissionregistrationv1.ValidationAction]bool{}
	for i, a := range actions {
		if !isOneOf(string(a), supportedActions) {
			errs = append(errs, field.NotSupported(path.Index(i), a, supportedActions))
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(path.Index(i), a))
		}
		seen[a] = true
	}
	if seen[admissionregistrationv1.Deny] && seen[admissionregistrationv1.Warn] {
		errs = append(errs, field.Invalid(path, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(path, "at least one validation action is required"))
	}
	return errs
}

// compileError reports an expression the scope rejected as the API server
// does (k8s.io/kubernetes pkg/apis/admissionregistration/validation,
// convertCELErrorToValidationError): an internal error, such as "program
// instantiation failed", as field.InternalError, anything else as
// field.Invalid with the expression as the value. The scope marks internal
// errors with an Internal method (celenv.CompileError has one).
func compileError(path *field.Path, expression string, err error) *field.Error {
	var internal interface{ Internal() bool }
	if errors.As(err, &internal) && internal.Internal() {
		return field.InternalError(path, err)
	}
	return field.Invalid(path, expression, err.Error())
}
