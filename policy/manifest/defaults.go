package manifest

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetPolicyDefaults applies the defaults the API server stores for a v1
// ValidatingAdmissionPolicy (kubernetes pkg/apis/admissionregistration/v1
// defaults.go): spec.failurePolicy Fail and, when spec.matchConstraints is
// set, the MatchResources defaults listed at [SetBindingDefaults]. It
// modifies p in place, fills only fields that are unset, and is idempotent.
// A nil p is ignored. [Decode] calls it for every policy it returns.
func SetPolicyDefaults(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if p == nil {
		return
	}
	if p.Spec.FailurePolicy == nil {
		fail := admissionregistrationv1.Fail
		p.Spec.FailurePolicy = &fail
	}
	setMatchResourcesDefaults(p.Spec.MatchConstraints)
}

// SetBindingDefaults applies the defaults the API server stores for a v1
// ValidatingAdmissionPolicyBinding. When spec.matchResources is set (it is
// not created when nil): matchPolicy Equivalent, namespaceSelector and
// objectSelector the empty selector {} (which matches everything), and the
// scope of every resourceRules and excludeResourceRules entry "*". v1 has no
// default for spec.paramRef.parameterNotFoundAction (the API server requires
// it; a nil value behaves as Allow at runtime). It modifies b in place, fills
// only fields that are unset, and is idempotent. A nil b is ignored.
// [Decode] calls it for every binding it returns.
func SetBindingDefaults(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	if b == nil {
		return
	}
	setMatchResourcesDefaults(b.Spec.MatchResources)
}

func setMatchResourcesDefaults(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		eq := admissionregistrationv1.Equivalent
		m.MatchPolicy = &eq
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		setRuleDefaults(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		setRuleDefaults(&m.ExcludeResourceRules[i].Rule)
	}
}

// setRuleDefaults sets scope "*" (all scopes) when unset, as SetDefaults_Rule.
func setRuleDefaults(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		all := admissionregistrationv1.AllScopes
		r.Scope = &all
	}
}
