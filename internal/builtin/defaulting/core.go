package defaulting

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// coreRegistrations register the defaulting functions of the core group.
var coreRegistrations = []func(*runtime.Scheme){registerCoreV1}

// registerCoreV1 registers every core/v1 kind kube-apiserver 1.37 defaults,
// each with its List, as the API server's scheme registers them.
func registerCoreV1(s *runtime.Scheme) {
	add(s, defaultPod, func(l *corev1.PodList) []corev1.Pod { return l.Items })
	add(s, defaultPodTemplate, func(l *corev1.PodTemplateList) []corev1.PodTemplate { return l.Items })
	add(s, defaultReplicationController, func(l *corev1.ReplicationControllerList) []corev1.ReplicationController { return l.Items })
	add(s, defaultService, func(l *corev1.ServiceList) []corev1.Service { return l.Items })
	add(s, defaultEndpoints, func(l *corev1.EndpointsList) []corev1.Endpoints { return l.Items })
	add(s, defaultPersistentVolume, func(l *corev1.PersistentVolumeList) []corev1.PersistentVolume { return l.Items })
	add(s, defaultPersistentVolumeClaim, func(l *corev1.PersistentVolumeClaimList) []corev1.PersistentVolumeClaim { return l.Items })
	add(s, defaultNamespace, func(l *corev1.NamespaceList) []corev1.Namespace { return l.Items })
	add(s, defaultNode, func(l *corev1.NodeList) []corev1.Node { return l.Items })
	add(s, defaultSecret, func(l *corev1.SecretList) []corev1.Secret { return l.Items })
	add(s, defaultConfigMap, func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items })
	add(s, defaultLimitRange, func(l *corev1.LimitRangeList) []corev1.LimitRange { return l.Items })
	add(s, defaultResourceQuota, func(l *corev1.ResourceQuotaList) []corev1.ResourceQuota { return l.Items })
	addKind(s, defaultPodLogOptions)
}

// add registers defaultItem for kind T and, through items, for its list L:
// a list is defaulted item by item.
func add[T any, PT interface {
	*T
	runtime.Object
}, L any, PL interface {
	*L
	runtime.Object
}](s *runtime.Scheme, defaultItem func(*T), items func(PL) []T) {
	addKind[T, PT](s, defaultItem)
	s.AddTypeDefaultingFunc(PL(new(L)), func(obj any) {
		list := items(obj.(PL))
		for i := range list {
			defaultItem(&list[i])
		}
	})
}

// addKind registers defaultObj for kind T.
func addKind[T any, PT interface {
	*T
	runtime.Object
}](s *runtime.Scheme, defaultObj func(*T)) {
	s.AddTypeDefaultingFunc(PT(new(T)), func(obj any) { defaultObj(obj.(PT)) })
}
