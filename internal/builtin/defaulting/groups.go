package defaulting

import "k8s.io/apimachinery/pkg/runtime"

// groupRegistrations register the defaulting functions of the named
// groups (apps, batch, networking, ...), one function per group version.
var groupRegistrations = []func(*runtime.Scheme){
	registerAdmissionregistrationV1,
	registerAdmissionregistrationV1alpha1,
	registerAdmissionregistrationV1beta1,
	registerAppsV1,
	registerAppsV1beta1,
	registerAppsV1beta2,
	registerAuthenticationV1,
	registerAutoscalingV1,
	registerAutoscalingV2,
	registerBatchV1,
	registerBatchV1beta1,
	registerCertificatesV1,
	registerCertificatesV1beta1,
	registerDiscoveryV1,
	registerDiscoveryV1beta1,
	registerExtensionsV1beta1,
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
