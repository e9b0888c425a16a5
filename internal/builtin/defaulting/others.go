package defaulting

import corev1 "k8s.io/api/core/v1"

// defaultReplicationController defaults a ReplicationController: selector
// and labels from the template's labels when unset, one replica, and the
// template.
func defaultReplicationController(rc *corev1.ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = copyLabels(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = copyLabels(t.Labels)
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptrTo[int32](1)
	}
	if rc.Spec.Template != nil {
		defaultPodTemplateSpec(rc.Spec.Template)
	}
}

func copyLabels(labels map[string]string) map[string]string {
	c := make(map[string]string, len(labels))
	for k, v := range labels {
		c[k] = v
	}
	return c
}

// defaultNamespace labels a named namespace with its name
// (kubernetes.io/metadata.name) and gives it the Active phase.
func defaultNamespace(ns *corev1.Namespace) {
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// defaultNode makes a node's allocatable its capacity when unset, and
// rounds both.
func defaultNode(node *corev1.Node) {
	status := &node.Status
	if status.Allocatable == nil && status.Capacity != nil {
		status.Allocatable = make(corev1.ResourceList, len(status.Capacity))
		for name, q := range status.Capacity {
			status.Allocatable[name] = q.DeepCopy()
		}
	}
	defaultResourceList(status.Capacity)
	defaultResourceList(status.Allocatable)
}

// defaultSecret gives a secret the Opaque type.
func defaultSecret(secret *corev1.Secret) {
	if secret.Type == "" {
		secret.Type = corev1.SecretTypeOpaque
	}
}

// defaultConfigMap gives a config map an empty (not null) data.
func defaultConfigMap(cm *corev1.ConfigMap) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
}

// defaultLimitRange defaults each limit: for containers, the default limit
// from max, the default request from the default limit then from min; and
// rounds every list.
func defaultLimitRange(lr *corev1.LimitRange) {
	for i := range lr.Spec.Limits {
		item := &lr.Spec.Limits[i]
		if item.Type == corev1.LimitTypeContainer {
			if item.Default == nil {
				item.Default = corev1.ResourceList{}
			}
			if item.DefaultRequest == nil {
				item.DefaultRequest = corev1.ResourceList{}
			}
			fillMissing(item.Default, item.Max)
			fillMissing(item.DefaultRequest, item.Default)
			fillMissing(item.DefaultRequest, item.Min)
		}
		for _, l := range []corev1.ResourceList{item.Max, item.Min, item.Default, item.DefaultRequest, item.MaxLimitRequestRatio} {
			defaultResourceList(l)
		}
	}
}

// fillMissing copies into dst each resource of from that dst lacks.
func fillMissing(dst, from corev1.ResourceList) {
	for name, q := range from {
		if _, set := dst[name]; !set {
			dst[name] = q.DeepCopy()
		}
	}
}

// defaultResourceQuota rounds a quota's hard and used lists.
func defaultResourceQuota(q *corev1.ResourceQuota) {
	defaultResourceList(q.Spec.Hard)
	defaultResourceList(q.Status.Hard)
	defaultResourceList(q.Status.Used)
}

// defaultPodLogOptions does nothing in 1.37: the stream it would fill is
// defaulted only under PodLogsQuerySplitStreams, alpha and off by default.
// It is registered because the API server has a function for the kind.
func defaultPodLogOptions(*corev1.PodLogOptions) {}
