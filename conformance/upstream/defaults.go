package upstream

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultPolicy applies the defaults the API server stores on a
// ValidatingAdmissionPolicy: failurePolicy Fail and the MatchResources
// defaults of DefaultMatchResources.
func defaultPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		fail := admissionregistrationv1.Fail
		p.Spec.FailurePolicy = &fail
	}
	DefaultMatchResources(p.Spec.MatchConstraints)
}

// defaultBinding applies the defaults the API server stores on a
// ValidatingAdmissionPolicyBinding (only its matchResources has any).
func defaultBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	DefaultMatchResources(b.Spec.MatchResources)
}

// DefaultMatchResources applies the defaults the API server stores on the
// matchResources (or matchConstraints) of a validating or mutating policy or
// binding: matchPolicy Equivalent, empty namespace and object selectors and
// rule scope "*" where they are unset. It does nothing to nil.
func DefaultMatchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		equivalent := admissionregistrationv1.Equivalent
		m.MatchPolicy = &equivalent
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		defaultScope(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultScope(&m.ExcludeResourceRules[i].Rule)
	}
}

func defaultScope(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		all := admissionregistrationv1.AllScopes
		r.Scope = &all
	}
}
