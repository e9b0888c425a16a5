package defaulting

import (
	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The apps group's workloads default their own fields first, then their pod
// template as the core group defaults a pod's spec, then (stateful sets)
// each volume claim template as a persistent volume claim.
//
// Feature gates at their 1.37 defaults: MaxUnavailableStatefulSet is on, so
// a rolling stateful set update may take one pod down at a time by default.

func registerAppsV1(s *runtime.Scheme) {
	add(s, defaultAppsV1Deployment, func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items })
	add(s, defaultAppsV1DaemonSet, func(l *appsv1.DaemonSetList) []appsv1.DaemonSet { return l.Items })
	add(s, defaultAppsV1StatefulSet, func(l *appsv1.StatefulSetList) []appsv1.StatefulSet { return l.Items })
	add(s, defaultAppsV1ReplicaSet, func(l *appsv1.ReplicaSetList) []appsv1.ReplicaSet { return l.Items })
}

func registerAppsV1beta1(s *runtime.Scheme) {
	add(s, defaultAppsV1beta1Deployment, func(l *appsv1beta1.DeploymentList) []appsv1beta1.Deployment { return l.Items })
	add(s, defaultAppsV1beta1StatefulSet, func(l *appsv1beta1.StatefulSetList) []appsv1beta1.StatefulSet { return l.Items })
}

func registerAppsV1beta2(s *runtime.Scheme) {
	add(s, defaultAppsV1beta2Deployment, func(l *appsv1beta2.DeploymentList) []appsv1beta2.Deployment { return l.Items })
	add(s, defaultAppsV1beta2DaemonSet, func(l *appsv1beta2.DaemonSetList) []appsv1beta2.DaemonSet { return l.Items })
	add(s, defaultAppsV1beta2StatefulSet, func(l *appsv1beta2.StatefulSetList) []appsv1beta2.StatefulSet { return l.Items })
	add(s, defaultAppsV1beta2ReplicaSet, func(l *appsv1beta2.ReplicaSetList) []appsv1beta2.ReplicaSet { return l.Items })
}

// quarter is the rolling update's default surge and unavailability of
// apps/v1 and apps/v1beta* deployments.
func quarter() *intstr.IntOrString { return new(intstr.FromString("25%")) }

func intOrInt(v int32) *intstr.IntOrString { return new(intstr.FromInt32(v)) }

// selectorFromTemplate gives the beta workloads (apps/v1beta1 and
// extensions/v1beta1) the template's labels as their selector when they
// have none, and as their own labels when those are empty.
func selectorFromTemplate(meta *metav1.ObjectMeta, selector **metav1.LabelSelector, template map[string]string) {
	if template == nil {
		return
	}
	if *selector == nil {
		*selector = &metav1.LabelSelector{MatchLabels: template}
	}
	if len(meta.Labels) == 0 {
		meta.Labels = template
	}
}

// defaultClaimTemplates defaults a stateful set's volume claim templates as
// the core group defaults persistent volume claims.
func defaultClaimTemplates(claims []corev1.PersistentVolumeClaim) {
	for i := range claims {
		defaultPersistentVolumeClaim(&claims[i])
	}
}

func defaultAppsV1Deployment(d *appsv1.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32(1))
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if st.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = quarter()
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = quarter()
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(10))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = new(int32(600))
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

func defaultAppsV1DaemonSet(d *appsv1.DaemonSet) {
	us := &d.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if us.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
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

func defaultAppsV1StatefulSet(ss *appsv1.StatefulSet) {
	spec := &ss.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = new(int32(0))
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = intOrInt(1)
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if rp := spec.PersistentVolumeClaimRetentionPolicy; rp.WhenDeleted == "" {
		rp.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if rp := spec.PersistentVolumeClaimRetentionPolicy; rp.WhenScaled == "" {
		rp.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = new(int32(1))
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = new(int32(10))
	}
	defaultPodTemplateSpec(&spec.Template)
	defaultClaimTemplates(spec.VolumeClaimTemplates)
}

func defaultAppsV1ReplicaSet(rs *appsv1.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = new(int32(1))
	}
	defaultPodTemplateSpec(&rs.Spec.Template)
}

func defaultAppsV1beta1Deployment(d *appsv1beta1.Deployment) {
	selectorFromTemplate(&d.ObjectMeta, &d.Spec.Selector, d.Spec.Template.Labels)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32(1))
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = appsv1beta1.RollingUpdateDeploymentStrategyType
	}
	if st.Type == appsv1beta1.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1beta1.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = quarter()
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = quarter()
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(2))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = new(int32(600))
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

func defaultAppsV1beta1StatefulSet(ss *appsv1beta1.StatefulSet) {
	spec := &ss.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1beta1.OrderedReadyPodManagement
	}
	// Unlike later versions, apps/v1beta1 updates stateful sets on delete
	// unless told otherwise, and gives no rolling update parameters.
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1beta1.OnDeleteStatefulSetStrategyType
	}
	selectorFromTemplate(&ss.ObjectMeta, &spec.Selector, spec.Template.Labels)
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1beta1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if rp := spec.PersistentVolumeClaimRetentionPolicy; rp.WhenDeleted == "" {
		rp.WhenDeleted = appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if rp := spec.PersistentVolumeClaimRetentionPolicy; rp.WhenScaled == "" {
		rp.WhenScaled = appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = new(int32(1))
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = new(int32(10))
	}
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1beta1.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = new(int32(0))
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = intOrInt(1)
		}
	}
	defaultPodTemplateSpec(&spec.Template)
	defaultClaimTemplates(spec.VolumeClaimTemplates)
}

func defaultAppsV1beta2Deployment(d *appsv1beta2.Deployment) {
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = new(int32(1))
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = appsv1beta2.RollingUpdateDeploymentStrategyType
	}
	if st.Type == appsv1beta2.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1beta2.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = quarter()
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = quarter()
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = new(int32(10))
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = new(int32(600))
	}
	defaultPodTemplateSpec(&d.Spec.Template)
}

func defaultAppsV1beta2DaemonSet(d *appsv1beta2.DaemonSet) {
	us := &d.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1beta2.RollingUpdateDaemonSetStrategyType
	}
	if us.Type == appsv1beta2.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1beta2.RollingUpdateDaemonSet{}
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

func defaultAppsV1beta2StatefulSet(ss *appsv1beta2.StatefulSet) {
	spec := &ss.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1beta2.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1beta2.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1beta2.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1beta2.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = new(int32(0))
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = intOrInt(1)
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1beta2.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if rp := spec.PersistentVolumeClaimRetentionPolicy; rp.WhenDeleted == "" {
		rp.WhenDeleted = appsv1beta2.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if rp := spec.PersistentVolumeClaimRetentionPolicy; rp.WhenScaled == "" {
		rp.WhenScaled = appsv1beta2.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = new(int32(1))
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = new(int32(10))
	}
	defaultPodTemplateSpec(&spec.Template)
	defaultClaimTemplates(spec.VolumeClaimTemplates)
}

func defaultAppsV1beta2ReplicaSet(rs *appsv1beta2.ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = new(int32(1))
	}
	defaultPodTemplateSpec(&rs.Spec.Template)
}
