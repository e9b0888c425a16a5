package defaulting

import (
	arv1 "k8s.io/api/admissionregistration/v1"
	arv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	arv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Webhook configurations default differently by version: v1 fails closed
// and matches equivalent resources with a 10 second timeout, v1beta1 kept
// the original behaviour (ignore failures, exact matching, 30 seconds, side
// effects unknown, AdmissionReview v1beta1). Policies and bindings default
// their failure policy and match resources alike in every version; only
// v1alpha1 bindings default their param reference's not-found action.

func registerAdmissionregistrationV1(s *runtime.Scheme) {
	add(s, func(c *arv1.ValidatingWebhookConfiguration) {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			defaultWebhookV1(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
			defaultClientConfigV1(&w.ClientConfig, w.Rules)
		}
	}, func(l *arv1.ValidatingWebhookConfigurationList) []arv1.ValidatingWebhookConfiguration { return l.Items })

	add(s, func(c *arv1.MutatingWebhookConfiguration) {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			defaultWebhookV1(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
			if w.ReinvocationPolicy == nil {
				w.ReinvocationPolicy = new(arv1.NeverReinvocationPolicy)
			}
			defaultClientConfigV1(&w.ClientConfig, w.Rules)
		}
	}, func(l *arv1.MutatingWebhookConfigurationList) []arv1.MutatingWebhookConfiguration { return l.Items })

	add(s, func(p *arv1.ValidatingAdmissionPolicy) {
		if p.Spec.FailurePolicy == nil {
			p.Spec.FailurePolicy = new(arv1.Fail)
		}
		defaultMatchResourcesV1(p.Spec.MatchConstraints)
	}, func(l *arv1.ValidatingAdmissionPolicyList) []arv1.ValidatingAdmissionPolicy { return l.Items })

	add(s, func(b *arv1.ValidatingAdmissionPolicyBinding) {
		defaultMatchResourcesV1(b.Spec.MatchResources)
	}, func(l *arv1.ValidatingAdmissionPolicyBindingList) []arv1.ValidatingAdmissionPolicyBinding {
		return l.Items
	})

	add(s, func(p *arv1.MutatingAdmissionPolicy) {
		if p.Spec.FailurePolicy == nil {
			p.Spec.FailurePolicy = new(arv1.Fail)
		}
		defaultMatchResourcesV1(p.Spec.MatchConstraints)
	}, func(l *arv1.MutatingAdmissionPolicyList) []arv1.MutatingAdmissionPolicy { return l.Items })

	add(s, func(b *arv1.MutatingAdmissionPolicyBinding) {
		defaultMatchResourcesV1(b.Spec.MatchResources)
	}, func(l *arv1.MutatingAdmissionPolicyBindingList) []arv1.MutatingAdmissionPolicyBinding { return l.Items })

}

func registerAdmissionregistrationV1beta1(s *runtime.Scheme) {
	add(s, func(c *arv1beta1.ValidatingWebhookConfiguration) {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			defaultWebhookV1beta1(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.SideEffects, &w.TimeoutSeconds, &w.AdmissionReviewVersions)
			defaultClientConfigV1beta1(&w.ClientConfig, w.Rules)
		}
	}, func(l *arv1beta1.ValidatingWebhookConfigurationList) []arv1beta1.ValidatingWebhookConfiguration {
		return l.Items
	})

	add(s, func(c *arv1beta1.MutatingWebhookConfiguration) {
		for i := range c.Webhooks {
			w := &c.Webhooks[i]
			defaultWebhookV1beta1(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.SideEffects, &w.TimeoutSeconds, &w.AdmissionReviewVersions)
			if w.ReinvocationPolicy == nil {
				w.ReinvocationPolicy = new(arv1beta1.NeverReinvocationPolicy)
			}
			defaultClientConfigV1beta1(&w.ClientConfig, w.Rules)
		}
	}, func(l *arv1beta1.MutatingWebhookConfigurationList) []arv1beta1.MutatingWebhookConfiguration {
		return l.Items
	})

	add(s, func(p *arv1beta1.ValidatingAdmissionPolicy) {
		if p.Spec.FailurePolicy == nil {
			p.Spec.FailurePolicy = new(arv1beta1.Fail)
		}
		defaultMatchResourcesV1beta1(p.Spec.MatchConstraints)
	}, func(l *arv1beta1.ValidatingAdmissionPolicyList) []arv1beta1.ValidatingAdmissionPolicy { return l.Items })

	add(s, func(b *arv1beta1.ValidatingAdmissionPolicyBinding) {
		defaultMatchResourcesV1beta1(b.Spec.MatchResources)
	}, func(l *arv1beta1.ValidatingAdmissionPolicyBindingList) []arv1beta1.ValidatingAdmissionPolicyBinding {
		return l.Items
	})

	add(s, func(p *arv1beta1.MutatingAdmissionPolicy) {
		if p.Spec.FailurePolicy == nil {
			p.Spec.FailurePolicy = new(arv1beta1.Fail)
		}
		defaultMatchResourcesV1beta1(p.Spec.MatchConstraints)
	}, func(l *arv1beta1.MutatingAdmissionPolicyList) []arv1beta1.MutatingAdmissionPolicy { return l.Items })

	add(s, func(b *arv1beta1.MutatingAdmissionPolicyBinding) {
		defaultMatchResourcesV1beta1(b.Spec.MatchResources)
	}, func(l *arv1beta1.MutatingAdmissionPolicyBindingList) []arv1beta1.MutatingAdmissionPolicyBinding {
		return l.Items
	})

}

func registerAdmissionregistrationV1alpha1(s *runtime.Scheme) {
	add(s, func(p *arv1alpha1.ValidatingAdmissionPolicy) {
		if p.Spec.FailurePolicy == nil {
			p.Spec.FailurePolicy = new(arv1alpha1.Fail)
		}
		defaultMatchResourcesV1alpha1(p.Spec.MatchConstraints)
	}, func(l *arv1alpha1.ValidatingAdmissionPolicyList) []arv1alpha1.ValidatingAdmissionPolicy {
		return l.Items
	})

	add(s, func(b *arv1alpha1.ValidatingAdmissionPolicyBinding) {
		defaultParamRefV1alpha1(b.Spec.ParamRef)
		defaultMatchResourcesV1alpha1(b.Spec.MatchResources)
	}, func(l *arv1alpha1.ValidatingAdmissionPolicyBindingList) []arv1alpha1.ValidatingAdmissionPolicyBinding {
		return l.Items
	})

	add(s, func(p *arv1alpha1.MutatingAdmissionPolicy) {
		if p.Spec.FailurePolicy == nil {
			p.Spec.FailurePolicy = new(arv1alpha1.Fail)
		}
		defaultMatchResourcesV1alpha1(p.Spec.MatchConstraints)
	}, func(l *arv1alpha1.MutatingAdmissionPolicyList) []arv1alpha1.MutatingAdmissionPolicy { return l.Items })

	add(s, func(b *arv1alpha1.MutatingAdmissionPolicyBinding) {
		defaultParamRefV1alpha1(b.Spec.ParamRef)
		defaultMatchResourcesV1alpha1(b.Spec.MatchResources)
	}, func(l *arv1alpha1.MutatingAdmissionPolicyBindingList) []arv1alpha1.MutatingAdmissionPolicyBinding {
		return l.Items
	})

}

// defaultSelectors gives absent namespace and object selectors the empty
// selector, which matches everything.
func defaultSelectors(namespace, object **metav1.LabelSelector) {
	if *namespace == nil {
		*namespace = &metav1.LabelSelector{}
	}
	if *object == nil {
		*object = &metav1.LabelSelector{}
	}
}

// defaultRuleScope gives a rule without a scope every scope.
func defaultRuleScope(r *arv1.Rule) {
	if r.Scope == nil {
		r.Scope = new(arv1.AllScopes)
	}
}

func defaultWebhookV1(fp **arv1.FailurePolicyType, mp **arv1.MatchPolicyType, ns, obj **metav1.LabelSelector, timeout **int32) {
	if *fp == nil {
		*fp = new(arv1.Fail)
	}
	if *mp == nil {
		*mp = new(arv1.Equivalent)
	}
	defaultSelectors(ns, obj)
	if *timeout == nil {
		*timeout = new(int32(10))
	}
}

func defaultClientConfigV1(cc *arv1.WebhookClientConfig, rules []arv1.RuleWithOperations) {
	if cc.Service != nil && cc.Service.Port == nil {
		cc.Service.Port = new(int32(443))
	}
	for i := range rules {
		defaultRuleScope(&rules[i].Rule)
	}
}

func defaultWebhookV1beta1(fp **arv1beta1.FailurePolicyType, mp **arv1beta1.MatchPolicyType, ns, obj **metav1.LabelSelector, se **arv1beta1.SideEffectClass, timeout **int32, versions *[]string) {
	if *fp == nil {
		*fp = new(arv1beta1.Ignore)
	}
	if *mp == nil {
		*mp = new(arv1beta1.Exact)
	}
	defaultSelectors(ns, obj)
	if *se == nil {
		*se = new(arv1beta1.SideEffectClassUnknown)
	}
	if *timeout == nil {
		*timeout = new(int32(30))
	}
	if len(*versions) == 0 {
		*versions = []string{"v1beta1"}
	}
}

func defaultClientConfigV1beta1(cc *arv1beta1.WebhookClientConfig, rules []arv1.RuleWithOperations) {
	if cc.Service != nil && cc.Service.Port == nil {
		cc.Service.Port = new(int32(443))
	}
	for i := range rules {
		defaultRuleScope(&rules[i].Rule)
	}
}

func defaultMatchResourcesV1(m *arv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = new(arv1.Equivalent)
	}
	defaultSelectors(&m.NamespaceSelector, &m.ObjectSelector)
	for i := range m.ResourceRules {
		defaultRuleScope(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultRuleScope(&m.ExcludeResourceRules[i].Rule)
	}
}

func defaultMatchResourcesV1beta1(m *arv1beta1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = new(arv1beta1.Equivalent)
	}
	defaultSelectors(&m.NamespaceSelector, &m.ObjectSelector)
	for i := range m.ResourceRules {
		defaultRuleScope(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultRuleScope(&m.ExcludeResourceRules[i].Rule)
	}
}

func defaultMatchResourcesV1alpha1(m *arv1alpha1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = new(arv1alpha1.Equivalent)
	}
	defaultSelectors(&m.NamespaceSelector, &m.ObjectSelector)
	for i := range m.ResourceRules {
		defaultRuleScope(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		defaultRuleScope(&m.ExcludeResourceRules[i].Rule)
	}
}

func defaultParamRefV1alpha1(p *arv1alpha1.ParamRef) {
	if p != nil && p.ParameterNotFoundAction == nil {
		p.ParameterNotFoundAction = new(arv1alpha1.DenyAction)
	}
}
