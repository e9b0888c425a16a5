package apivalidation

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The accepted values of enumerations, sorted as upstream's sets.String.List
// sorts them, since they appear in "supported values" messages.
var (
	supportedFailurePolicies = []string{"Fail", "Ignore"}
	supportedMatchPolicies   = []string{"Equivalent", "Exact"}
	supportedOperations      = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	supportedScopes          = []string{"*", "Cluster", "Namespaced"}
	supportedReasons         = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	supportedActions         = []string{"Audit", "Deny", "Warn"}
)

func isOneOf(v string, allowed []string) bool { return slices.Contains(allowed, v) }

// validateQualifiedName reports value unless it is a qualified name
// ("prefix/name" with a DNS subdomain prefix, name at most 63 characters), as
// k8s.io/kubernetes pkg/apis/core/validation ValidateQualifiedName does.
func validateQualifiedName(value string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range content.IsQualifiedName(value) {
		errs = append(errs, field.Invalid(p, value, msg))
	}
	return errs
}

// validatePathSegmentName returns why name cannot be one segment of a
// resource path, if it cannot.
func validatePathSegmentName(name string) []string {
	return path.ValidatePathSegmentName(name, false)
}

// validateLabelSelector validates a selector strictly: the admission policy
// types came after kubernetes/kubernetes#99139, so invalid label values in
// their selectors were never tolerated.
func validateLabelSelector(s *metav1.LabelSelector, p *field.Path) field.ErrorList {
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, p)
}

// celIdentifier is CEL's IDENT production; reserved words are excluded
// separately.
var celIdentifier = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)

// celReserved are the words CEL's grammar reserves: the literals true, false
// and null, the operator in, and the words kept for future use.
var celReserved = []string{
	"true", "false", "null", "in",
	"as", "break", "const", "continue", "else", "for", "function", "if",
	"import", "let", "loop", "package", "namespace", "return", "var", "void", "while",
}

// isCELIdentifier reports whether name can be written as variables.<name>.
func isCELIdentifier(name string) bool {
	return celIdentifier.MatchString(name) && !slices.Contains(celReserved, name)
}

// validateMatchResources checks the matchConstraints of a policy or the
// matchResources of a binding; nil is valid (a policy requires it
// separately). Whether resourceRules may be empty is the caller's concern.
func validateMatchResources(m *admissionregistrationv1.MatchResources, p *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MatchPolicy == nil {
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	} else if !isOneOf(string(*m.MatchPolicy), supportedMatchPolicies) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *m.MatchPolicy, supportedMatchPolicies))
	}
	if m.NamespaceSelector == nil {
		errs = append(errs, field.Required(p.Child("namespaceSelector"), ""))
	} else {
		errs = append(errs, validateLabelSelector(m.NamespaceSelector, p.Child("namespaceSelector"))...)
	}
	if m.ObjectSelector == nil {
		errs = append(errs, field.Required(p.Child("objectSelector"), ""))
	} else {
		errs = append(errs, validateLabelSelector(m.ObjectSelector, p.Child("objectSelector"))...)
	}
	for i := range m.ResourceRules {
		errs = append(errs, validateNamedRule(&m.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range m.ExcludeResourceRules {
		errs = append(errs, validateNamedRule(&m.ExcludeResourceRules[i], p.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

// validateNamedRule checks one resource rule: its resourceNames, then its
// operations and rule.
func validateNamedRule(r *admissionregistrationv1.NamedRuleWithOperations, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, name := range r.ResourceNames {
		for _, msg := range validatePathSegmentName(name) {
			errs = append(errs, field.Invalid(p.Child("resourceNames").Index(i), name, msg))
		}
		if seen[name] {
			errs = append(errs, field.Duplicate(p.Child("resourceNames").Index(i), name))
		}
		seen[name] = true
	}
	ops := p.Child("operations")
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(ops, ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
		errs = append(errs, field.Invalid(ops, r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !isOneOf(string(op), supportedOperations) {
			errs = append(errs, field.NotSupported(ops.Index(i), op, supportedOperations))
		}
	}
	return append(errs, validateRule(&r.Rule, p)...)
}

// validateRule checks apiGroups, apiVersions, resources (subresources
// allowed) and scope of a rule.
func validateRule(r *admissionregistrationv1.Rule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	groups := p.Child("apiGroups")
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(groups, ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(groups, r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	// An empty group is the legacy core group, so empty strings are fine
	// here; an empty version is not.
	versions := p.Child("apiVersions")
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(versions, ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(versions, r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(versions.Index(i), ""))
		}
	}
	errs = append(errs, validateResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !isOneOf(string(*r.Scope), supportedScopes) {
		errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope, supportedScopes))
	}
	return errs
}

// validateResources checks a rule's resources, where "x/y" names subresource
// y of x and either part may be "*". Wildcards must not overlap other
// entries: "*/*" stands alone, "*" excludes plain resources, "x/*" excludes
// "x/y" and "*/y" excludes "x/y" listed after it.
func validateResources(resources []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	allSubresourcesOf := map[string]bool{} // x of "x/*"
	subresourceOfAll := map[string]bool{}  // y of "*/y"
	doubleWildcard, singleWildcard := false, false
	// plain tracks whether the last entry without a subresource was a plain
	// resource: upstream overwrites the flag on every such entry.
	plain := false
	for i, entry := range resources {
		if entry == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		switch entry {
		case "*/*":
			doubleWildcard = true
		case "*":
			singleWildcard = true
		}
		res, sub, hasSub := strings.Cut(entry, "/")
		if !hasSub {
			plain = entry != "*"
			continue
		}
		if allSubresourcesOf[res] {
			errs = append(errs, field.Invalid(p.Index(i), entry, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, entry)))
		}
		if subresourceOfAll[sub] {
			errs = append(errs, field.Invalid(p.Index(i), entry, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, entry)))
		}
		if sub == "*" {
			allSubresourcesOf[res] = true
		}
		if res == "*" {
			subresourceOfAll[sub] = true
		}
	}
	if len(resources) > 1 && doubleWildcard {
		errs = append(errs, field.Invalid(p, resources, "if '*/*' is present, must not specify other resources"))
	}
	if singleWildcard && plain {
		errs = append(errs, field.Invalid(p, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}
