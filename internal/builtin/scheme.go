package builtin

import (
	"fmt"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	apiserverinternalv1alpha1 "k8s.io/api/apiserverinternal/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	appsv1beta2 "k8s.io/api/apps/v1beta2"
	authenticationv1 "k8s.io/api/authentication/v1"
	authenticationv1alpha1 "k8s.io/api/authentication/v1alpha1"
	authenticationv1beta1 "k8s.io/api/authentication/v1beta1"
	authorizationv1 "k8s.io/api/authorization/v1"
	authorizationv1beta1 "k8s.io/api/authorization/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1alpha1 "k8s.io/api/certificates/v1alpha1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	flowcontrolv1beta1 "k8s.io/api/flowcontrol/v1beta1"
	flowcontrolv1beta2 "k8s.io/api/flowcontrol/v1beta2"
	flowcontrolv1beta3 "k8s.io/api/flowcontrol/v1beta3"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	lifecyclev1alpha1 "k8s.io/api/lifecycle/v1alpha1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	nodev1 "k8s.io/api/node/v1"
	nodev1alpha1 "k8s.io/api/node/v1alpha1"
	nodev1beta1 "k8s.io/api/node/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1alpha1 "k8s.io/api/rbac/v1alpha1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1alpha1 "k8s.io/api/storage/v1alpha1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	storagemigrationv1beta1 "k8s.io/api/storagemigration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin/defaulting"
)

// Scheme returns the scheme of every group version in k8s.io/api v0.37.2,
// built on first use and shared afterwards. It also holds the meta.k8s.io/v1
// option kinds (CreateOptions, UpdateOptions, DeleteOptions, ...) that
// admission requests carry in their options field, registered the way the
// API server and client-go register them: unversioned in meta.k8s.io/v1 and
// versioned in the core group version, plus the Table and
// PartialObjectMetadata kinds of meta.k8s.io/v1.
//
// The scheme must not be modified: callers share it, and *runtime.Scheme is
// only safe for concurrent use while nobody registers types.
func Scheme() *runtime.Scheme {
	return sharedScheme()
}

var sharedScheme = sync.OnceValue(func() *runtime.Scheme {
	s, err := newScheme()
	if err != nil {
		// Registration of the k8s.io/api packages cannot fail unless the
		// module itself is broken; an empty scheme makes every kind
		// custom, which the tests catch.
		return runtime.NewScheme()
	}
	return s
})

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	// meta.k8s.io/v1 first, so that ObjectKinds lists it before the copies
	// every group version registers; the option kinds then default to
	// meta.k8s.io/v1 as in the API server's admission requests.
	s.AddUnversionedTypes(metav1.SchemeGroupVersion,
		&metav1.ListOptions{}, &metav1.GetOptions{}, &metav1.DeleteOptions{},
		&metav1.CreateOptions{}, &metav1.UpdateOptions{}, &metav1.PatchOptions{})
	if err := metav1.AddMetaToScheme(s); err != nil {
		return nil, fmt.Errorf("registering meta.k8s.io/v1: %w", err)
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, add := range groupVersions {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	defaulting.Register(s)
	return s, nil
}

// groupVersions register the group versions of k8s.io/api v0.37.2.
var groupVersions = []func(*runtime.Scheme) error{
	admissionv1.AddToScheme,
	admissionv1beta1.AddToScheme,
	admissionregistrationv1.AddToScheme,
	admissionregistrationv1alpha1.AddToScheme,
	admissionregistrationv1beta1.AddToScheme,
	apidiscoveryv2.AddToScheme,
	apidiscoveryv2beta1.AddToScheme,
	apiserverinternalv1alpha1.AddToScheme,
	appsv1.AddToScheme,
	appsv1beta1.AddToScheme,
	appsv1beta2.AddToScheme,
	authenticationv1.AddToScheme,
	authenticationv1alpha1.AddToScheme,
	authenticationv1beta1.AddToScheme,
	authorizationv1.AddToScheme,
	authorizationv1beta1.AddToScheme,
	autoscalingv1.AddToScheme,
	autoscalingv2.AddToScheme,
	batchv1.AddToScheme,
	batchv1beta1.AddToScheme,
	certificatesv1.AddToScheme,
	certificatesv1alpha1.AddToScheme,
	certificatesv1beta1.AddToScheme,
	coordinationv1.AddToScheme,
	coordinationv1alpha2.AddToScheme,
	coordinationv1beta1.AddToScheme,
	corev1.AddToScheme,
	discoveryv1.AddToScheme,
	discoveryv1beta1.AddToScheme,
	eventsv1.AddToScheme,
	eventsv1beta1.AddToScheme,
	extensionsv1beta1.AddToScheme,
	flowcontrolv1.AddToScheme,
	flowcontrolv1beta1.AddToScheme,
	flowcontrolv1beta2.AddToScheme,
	flowcontrolv1beta3.AddToScheme,
	imagepolicyv1alpha1.AddToScheme,
	lifecyclev1alpha1.AddToScheme,
	networkingv1.AddToScheme,
	networkingv1beta1.AddToScheme,
	nodev1.AddToScheme,
	nodev1alpha1.AddToScheme,
	nodev1beta1.AddToScheme,
	policyv1.AddToScheme,
	policyv1beta1.AddToScheme,
	rbacv1.AddToScheme,
	rbacv1alpha1.AddToScheme,
	rbacv1beta1.AddToScheme,
	resourcev1.AddToScheme,
	resourcev1alpha3.AddToScheme,
	resourcev1beta1.AddToScheme,
	resourcev1beta2.AddToScheme,
	schedulingv1.AddToScheme,
	schedulingv1alpha3.AddToScheme,
	schedulingv1beta1.AddToScheme,
	storagev1.AddToScheme,
	storagev1alpha1.AddToScheme,
	storagev1beta1.AddToScheme,
	storagemigrationv1.AddToScheme,
	storagemigrationv1beta1.AddToScheme,
}
