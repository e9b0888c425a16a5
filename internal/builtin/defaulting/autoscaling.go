package defaulting

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A horizontal pod autoscaler keeps at least one replica. In autoscaling/v2
// one without metrics targets 80% average CPU utilization, and a behavior
// that is set gets each missing direction's rules, or each missing part of
// a direction's rules, from the controller's built-in defaults.

func registerAutoscalingV1(s *runtime.Scheme) {
	add(s, func(h *autoscalingv1.HorizontalPodAutoscaler) {
		if h.Spec.MinReplicas == nil {
			h.Spec.MinReplicas = new(int32(1))
		}
	}, func(l *autoscalingv1.HorizontalPodAutoscalerList) []autoscalingv1.HorizontalPodAutoscaler {
		return l.Items
	})

}

func registerAutoscalingV2(s *runtime.Scheme) {
	add(s,

		defaultAutoscalingV2HPA, func(l *autoscalingv2.HorizontalPodAutoscalerList) []autoscalingv2.HorizontalPodAutoscaler {
			return l.Items
		})

}

// defaultCPUUtilization is the target of an autoscaler without metrics.
const defaultCPUUtilization int32 = 80

func defaultAutoscalingV2HPA(h *autoscalingv2.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = new(int32(1))
	}
	if len(h.Spec.Metrics) == 0 {
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: new(defaultCPUUtilization),
				},
			},
		}}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = mergeScalingRules(b.ScaleUp, scaleUpRules())
		b.ScaleDown = mergeScalingRules(b.ScaleDown, scaleDownRules())
	}
}

// scaleUpRules are the rules of scaling up when none are given: no
// stabilization, and at most four pods or doubling every 15 seconds,
// whichever adds more.
func scaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: new(int32(0)),
		SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// scaleDownRules are the rules of scaling down when none are given: the
// controller's own stabilization window (left unset), and up to every pod
// removed per 15 seconds.
func scaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// mergeScalingRules returns def with every part given in the user's rules
// taking its place; a nil user rule set yields def whole.
func mergeScalingRules(user, def *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if user == nil {
		return def
	}
	if user.SelectPolicy != nil {
		def.SelectPolicy = user.SelectPolicy
	}
	if user.StabilizationWindowSeconds != nil {
		def.StabilizationWindowSeconds = user.StabilizationWindowSeconds
	}
	if user.Policies != nil {
		def.Policies = user.Policies
	}
	if user.Tolerance != nil {
		def.Tolerance = user.Tolerance
	}
	return def
}
