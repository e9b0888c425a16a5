package defaulting

import (
	"math"

	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// extensions/v1beta1 keeps the oldest workload defaults: selectors and
// labels from the pod template, daemon sets updated on delete, deployments
// rolling one pod at a time with an unlimited history and deadline.
//
// Its network policies get their policy types but, unlike
// networking.k8s.io/v1, no default port protocol: the API server's
// defaulting sets the protocol on a copy of each port, so the object keeps
// its ports as they were.

func registerExtensionsV1beta1(s *runtime.Scheme) {
	add(s, defaultExtensionsDeployment, func(l *extensionsv1beta1.DeploymentList) []extensionsv1beta1.Deployment { return l.Items })
	add(s, defaultExtensionsDaemonSet, func(l *extensionsv1beta1.DaemonSetList) []extensionsv1beta1.DaemonSet { return l.Items })
	add(s, defaultExtensionsReplicaSet, func(l *extensionsv1beta1.ReplicaSetList) []extensionsv1beta1.ReplicaSet { return l.Items })
	add(s, func(p *extensionsv1beta1.NetworkPolicy) {
		if len(p.Spec.PolicyTypes) == 0 {
			p.Spec.PolicyTypes = []extensionsv1beta1.PolicyType{extensionsv1beta1.PolicyTypeIngress}
			if len(p.Spec.Egress) != 0 {
				p.Spec.PolicyTypes = append(p.Spec.PolicyTypes, extensionsv1beta1.PolicyTypeEgress)
			}
		}
	}, func(l *extensionsv1beta1.NetworkPolicyList) []extensionsv1beta1.NetworkPolicy { return l.Items })

	add(s, func(in *extensionsv1beta1.Ingress) {
		for i := range in.Spec.Rules {
			if http := in.Spec.Rules[i].HTTP; http != nil {
				for j := range http.Paths {
					if p := &http.Paths[j]; p.PathType == nil {
						p.PathType = new(extensionsv1beta1.PathTypeImplementationSpecific)
					}
				}
			}
		}
	}, func(l *extensionsv1beta1.IngressList) []extensionsv1beta1.Ingress { return l.Items })

}

func defaultExtensionsDeployment(d *extensionsv1beta1.Deployment) {
	selectorFromTemplate(&d.ObjectMeta, &d.Spec.Selector, d.Spec.Template.Labels)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32(1))
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = extensionsv1beta1.RollingUpdateDeploymentStrategyType
	}
	// Rolling update parameters are defaulted whenever they are present,
	// even for a Recreate deployment.
	if st.Type == extensionsv1beta1.RollingUpdateDeploymentStrategyType || st.RollingUpdate != nil {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &extensionsv1beta1.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = intOrInt(1)
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = intOrInt(1)
		}
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = new(int32(math.MaxInt32))
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(math.MaxInt32))
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

func defaultExtensionsDaemonSet(d *extensionsv1beta1.DaemonSet) {
	selectorFromTemplate(&d.ObjectMeta, &d.Spec.Selector, d.Spec.Template.Labels)
	us := &d.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = extensionsv1beta1.OnDeleteDaemonSetStrategyType
	}
	if us.Type == extensionsv1beta1.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &extensionsv1beta1.RollingUpdateDaemonSet{}
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = intOrInt(1)
		}
		if us.RollingUpdate.MaxSurge == nil {
			us.RollingUpdate.MaxSurge = intOrInt(0)
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(10))
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

func defaultExtensionsReplicaSet(rs *extensionsv1beta1.ReplicaSet) {
	selectorFromTemplate(&rs.ObjectMeta, &rs.Spec.Selector, rs.Spec.Template.Labels)
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = new(int32(1))
	}
	defaultPodTemplateSpec(&rs.Spec.Template)
}
