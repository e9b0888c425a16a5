package defaulting

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Priority classes preempt lower priorities by default. Pod groups and
// composite pod groups may be disrupted one member at a time by default;
// their preemption policy is defaulted only under the PodGroupPreemptionPolicy
// feature gate, which is off in 1.37, so it stays as given.

func registerSchedulingV1(s *runtime.Scheme) {
	add(s, func(c *schedulingv1.PriorityClass) {
		if c.PreemptionPolicy == nil {
			c.PreemptionPolicy = new(corev1.PreemptLowerPriority)
		}
	}, func(l *schedulingv1.PriorityClassList) []schedulingv1.PriorityClass { return l.Items })

}

func registerSchedulingV1beta1(s *runtime.Scheme) {
	add(s, func(c *schedulingv1beta1.PriorityClass) {
		if c.PreemptionPolicy == nil {
			c.PreemptionPolicy = new(corev1.PreemptLowerPriority)
		}
	}, func(l *schedulingv1beta1.PriorityClassList) []schedulingv1beta1.PriorityClass { return l.Items })

	add(s, func(g *schedulingv1beta1.PodGroup) {
		if g.Spec.DisruptionMode == nil {
			g.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
		}
	}, func(l *schedulingv1beta1.PodGroupList) []schedulingv1beta1.PodGroup { return l.Items })

}

func registerSchedulingV1alpha3(s *runtime.Scheme) {
	add(s, func(g *schedulingv1alpha3.PodGroup) {
		if g.Spec.DisruptionMode == nil {
			g.Spec.DisruptionMode = &schedulingv1alpha3.DisruptionMode{Single: &schedulingv1alpha3.SingleDisruptionMode{}}
		}
	}, func(l *schedulingv1alpha3.PodGroupList) []schedulingv1alpha3.PodGroup { return l.Items })

	add(s, func(g *schedulingv1alpha3.CompositePodGroup) {
		if g.Spec.DisruptionMode == nil {
			g.Spec.DisruptionMode = &schedulingv1alpha3.CompositeDisruptionMode{Single: &schedulingv1alpha3.SingleCompositeDisruptionMode{}}
		}
	}, func(l *schedulingv1alpha3.CompositePodGroupList) []schedulingv1alpha3.CompositePodGroup {
		return l.Items
	})

}
