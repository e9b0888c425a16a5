package defaulting

import "k8s.io/apimachinery/pkg/runtime"

// groupRegistrations register the defaulting functions of the named
// groups (apps, batch, networking, ...), one function per group version.
var groupRegistrations = []func(*runtime.Scheme){
	registerAdmissionregistrationV1,
	registerAdmissionregistrationV1alpha1,
	registerAdmissionregistrationV1beta1,
	registerAuthenticationV1,
	registerAutoscalingV1,
	registerAutoscalingV2,
	registerCertificatesV1,
	registerCertificatesV1beta1,
	registerDiscoveryV1,
	registerDiscoveryV1beta1,
	registerFlowcontrolV1,
	registerFlowcontrolV1beta1,
	registerFlowcontrolV1beta2,
	registerFlowcontrolV1beta3,
	registerNetworkingV1,
	registerNetworkingV1beta1,
	registerRbacV1,
	registerRbacV1alpha1,
	registerRbacV1beta1,
	registerResourceV1,
	registerResourceV1alpha3,
	registerResourceV1beta1,
	registerResourceV1beta2,
	registerSchedulingV1,
	registerSchedulingV1alpha3,
	registerSchedulingV1beta1,
	registerStorageV1,
	registerStorageV1alpha1,
	registerStorageV1beta1,
}

// addGroupKind registers f as the defaulting function of the kind *T and, item
// by item, of its list kind *L, as the API server registers both.
func addGroupKind[T, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}](s *runtime.Scheme, items func(*L) []T, f func(*T)) {
	s.AddTypeDefaultingFunc(PT(new(T)), func(o any) { f(o.(*T)) })
	s.AddTypeDefaultingFunc(PL(new(L)), func(o any) {
		list := items(o.(*L))
		for i := range list {
			f(&list[i])
		}
	})
}

// addGroupSingleKind registers f as the defaulting function of the kind *T,
// which has no list kind.
func addGroupSingleKind[T any, PT interface {
	*T
	runtime.Object
}](s *runtime.Scheme, f func(*T)) {
	s.AddTypeDefaultingFunc(PT(new(T)), func(o any) { f(o.(*T)) })
}
