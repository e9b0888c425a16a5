// Package kubedefaults holds kube-apiserver 1.37's defaulting of the
// built-in kinds, for judging vapkit's own (internal/builtin/defaulting):
// [Scheme] is a scheme of the k8s.io/api types on which every group
// version's defaulting functions of k8s.io/kubernetes v1.37.2
// (pkg/apis/GROUP/VERSION RegisterDefaults: the SetDefaults_* functions of
// defaults.go and the +default markers of k8s.io/api) are registered, the
// way kube-apiserver's legacy scheme holds them. Feature gates are at their
// 1.37 defaults (k8s.io/kubernetes pkg/features, never changed here).
//
// The package's test generates objects of every kind either side defaults
// and compares kube's defaulting with vapkit's.
package kubedefaults

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kabacv1beta1 "k8s.io/kubernetes/pkg/apis/abac/v1beta1"
	kadmissionv1 "k8s.io/kubernetes/pkg/apis/admission/v1"
	kadmissionv1beta1 "k8s.io/kubernetes/pkg/apis/admission/v1beta1"
	kadmissionregistrationv1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1"
	kadmissionregistrationv1alpha1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1alpha1"
	kadmissionregistrationv1beta1 "k8s.io/kubernetes/pkg/apis/admissionregistration/v1beta1"
	kapidiscoveryv2 "k8s.io/kubernetes/pkg/apis/apidiscovery/v2"
	kapidiscoveryv2beta1 "k8s.io/kubernetes/pkg/apis/apidiscovery/v2beta1"
	kapiserverinternalv1alpha1 "k8s.io/kubernetes/pkg/apis/apiserverinternal/v1alpha1"
	kappsv1 "k8s.io/kubernetes/pkg/apis/apps/v1"
	kappsv1beta1 "k8s.io/kubernetes/pkg/apis/apps/v1beta1"
	kappsv1beta2 "k8s.io/kubernetes/pkg/apis/apps/v1beta2"
	kauthenticationv1 "k8s.io/kubernetes/pkg/apis/authentication/v1"
	kauthenticationv1alpha1 "k8s.io/kubernetes/pkg/apis/authentication/v1alpha1"
	kauthenticationv1beta1 "k8s.io/kubernetes/pkg/apis/authentication/v1beta1"
	kauthorizationv1 "k8s.io/kubernetes/pkg/apis/authorization/v1"
	kauthorizationv1beta1 "k8s.io/kubernetes/pkg/apis/authorization/v1beta1"
	kautoscalingv1 "k8s.io/kubernetes/pkg/apis/autoscaling/v1"
	kautoscalingv2 "k8s.io/kubernetes/pkg/apis/autoscaling/v2"
	kbatchv1 "k8s.io/kubernetes/pkg/apis/batch/v1"
	kbatchv1beta1 "k8s.io/kubernetes/pkg/apis/batch/v1beta1"
	kcertificatesv1 "k8s.io/kubernetes/pkg/apis/certificates/v1"
	kcertificatesv1alpha1 "k8s.io/kubernetes/pkg/apis/certificates/v1alpha1"
	kcertificatesv1beta1 "k8s.io/kubernetes/pkg/apis/certificates/v1beta1"
	kcoordinationv1 "k8s.io/kubernetes/pkg/apis/coordination/v1"
	kcoordinationv1alpha2 "k8s.io/kubernetes/pkg/apis/coordination/v1alpha2"
	kcoordinationv1beta1 "k8s.io/kubernetes/pkg/apis/coordination/v1beta1"
	kcorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	kdiscoveryv1 "k8s.io/kubernetes/pkg/apis/discovery/v1"
	kdiscoveryv1beta1 "k8s.io/kubernetes/pkg/apis/discovery/v1beta1"
	keventsv1 "k8s.io/kubernetes/pkg/apis/events/v1"
	keventsv1beta1 "k8s.io/kubernetes/pkg/apis/events/v1beta1"
	kextensionsv1beta1 "k8s.io/kubernetes/pkg/apis/extensions/v1beta1"
	kflowcontrolv1 "k8s.io/kubernetes/pkg/apis/flowcontrol/v1"
	kflowcontrolv1beta1 "k8s.io/kubernetes/pkg/apis/flowcontrol/v1beta1"
	kflowcontrolv1beta2 "k8s.io/kubernetes/pkg/apis/flowcontrol/v1beta2"
	kflowcontrolv1beta3 "k8s.io/kubernetes/pkg/apis/flowcontrol/v1beta3"
	kimagepolicyv1alpha1 "k8s.io/kubernetes/pkg/apis/imagepolicy/v1alpha1"
	klifecyclev1alpha1 "k8s.io/kubernetes/pkg/apis/lifecycle/v1alpha1"
	knetworkingv1 "k8s.io/kubernetes/pkg/apis/networking/v1"
	knetworkingv1beta1 "k8s.io/kubernetes/pkg/apis/networking/v1beta1"
	kpolicyv1 "k8s.io/kubernetes/pkg/apis/policy/v1"
	kpolicyv1beta1 "k8s.io/kubernetes/pkg/apis/policy/v1beta1"
	krbacv1 "k8s.io/kubernetes/pkg/apis/rbac/v1"
	krbacv1alpha1 "k8s.io/kubernetes/pkg/apis/rbac/v1alpha1"
	krbacv1beta1 "k8s.io/kubernetes/pkg/apis/rbac/v1beta1"
	kresourcev1 "k8s.io/kubernetes/pkg/apis/resource/v1"
	kresourcev1alpha3 "k8s.io/kubernetes/pkg/apis/resource/v1alpha3"
	kresourcev1beta1 "k8s.io/kubernetes/pkg/apis/resource/v1beta1"
	kresourcev1beta2 "k8s.io/kubernetes/pkg/apis/resource/v1beta2"
	kschedulingv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	kschedulingv1alpha3 "k8s.io/kubernetes/pkg/apis/scheduling/v1alpha3"
	kschedulingv1beta1 "k8s.io/kubernetes/pkg/apis/scheduling/v1beta1"
	kstoragev1 "k8s.io/kubernetes/pkg/apis/storage/v1"
	kstoragev1alpha1 "k8s.io/kubernetes/pkg/apis/storage/v1alpha1"
	kstoragev1beta1 "k8s.io/kubernetes/pkg/apis/storage/v1beta1"
	kstoragemigrationv1 "k8s.io/kubernetes/pkg/apis/storagemigration/v1"
	kstoragemigrationv1beta1 "k8s.io/kubernetes/pkg/apis/storagemigration/v1beta1"
)

// Scheme returns the shared scheme: the k8s.io/api types of client-go's
// scheme plus kube's defaulting functions. It must not be modified.
func Scheme() (*runtime.Scheme, error) { return sharedScheme() }

var sharedScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("registering client-go's scheme: %w", err)
	}
	for _, register := range registerDefaults {
		if err := register(s); err != nil {
			return nil, fmt.Errorf("registering kube's defaulting functions: %w", err)
		}
	}
	return s, nil
})

// registerDefaults are the RegisterDefaults functions of every group
// version of k8s.io/kubernetes v1.37.2 pkg/apis that has one.
var registerDefaults = []func(*runtime.Scheme) error{
	kabacv1beta1.RegisterDefaults,
	kadmissionv1.RegisterDefaults,
	kadmissionv1beta1.RegisterDefaults,
	kadmissionregistrationv1.RegisterDefaults,
	kadmissionregistrationv1alpha1.RegisterDefaults,
	kadmissionregistrationv1beta1.RegisterDefaults,
	kapidiscoveryv2.RegisterDefaults,
	kapidiscoveryv2beta1.RegisterDefaults,
	kapiserverinternalv1alpha1.RegisterDefaults,
	kappsv1.RegisterDefaults,
	kappsv1beta1.RegisterDefaults,
	kappsv1beta2.RegisterDefaults,
	kauthenticationv1.RegisterDefaults,
	kauthenticationv1alpha1.RegisterDefaults,
	kauthenticationv1beta1.RegisterDefaults,
	kauthorizationv1.RegisterDefaults,
	kauthorizationv1beta1.RegisterDefaults,
	kautoscalingv1.RegisterDefaults,
	kautoscalingv2.RegisterDefaults,
	kbatchv1.RegisterDefaults,
	kbatchv1beta1.RegisterDefaults,
	kcertificatesv1.RegisterDefaults,
	kcertificatesv1alpha1.RegisterDefaults,
	kcertificatesv1beta1.RegisterDefaults,
	kcoordinationv1.RegisterDefaults,
	kcoordinationv1alpha2.RegisterDefaults,
	kcoordinationv1beta1.RegisterDefaults,
	kcorev1.RegisterDefaults,
	kdiscoveryv1.RegisterDefaults,
	kdiscoveryv1beta1.RegisterDefaults,
	keventsv1.RegisterDefaults,
	keventsv1beta1.RegisterDefaults,
	kextensionsv1beta1.RegisterDefaults,
	kflowcontrolv1.RegisterDefaults,
	kflowcontrolv1beta1.RegisterDefaults,
	kflowcontrolv1beta2.RegisterDefaults,
	kflowcontrolv1beta3.RegisterDefaults,
	kimagepolicyv1alpha1.RegisterDefaults,
	klifecyclev1alpha1.RegisterDefaults,
	knetworkingv1.RegisterDefaults,
	knetworkingv1beta1.RegisterDefaults,
	kpolicyv1.RegisterDefaults,
	kpolicyv1beta1.RegisterDefaults,
	krbacv1.RegisterDefaults,
	krbacv1alpha1.RegisterDefaults,
	krbacv1beta1.RegisterDefaults,
	kresourcev1.RegisterDefaults,
	kresourcev1alpha3.RegisterDefaults,
	kresourcev1beta1.RegisterDefaults,
	kresourcev1beta2.RegisterDefaults,
	kschedulingv1.RegisterDefaults,
	kschedulingv1alpha3.RegisterDefaults,
	kschedulingv1beta1.RegisterDefaults,
	kstoragev1.RegisterDefaults,
	kstoragev1alpha1.RegisterDefaults,
	kstoragev1beta1.RegisterDefaults,
	kstoragemigrationv1.RegisterDefaults,
	kstoragemigrationv1beta1.RegisterDefaults,
}

// Defaulter defaults objects with [Scheme], as kube-apiserver 1.37's
// admission ObjectInterfaces.GetObjectDefaulter does: the harnesses of
// upstream's admission plugins use it. It panics if [Scheme] could not be
// built, which only a broken module causes.
var Defaulter runtime.ObjectDefaulter = defaulter{}

type defaulter struct{}

func (defaulter) Default(obj runtime.Object) {
	s, err := Scheme()
	if err != nil {
		panic("kubedefaults: " + err.Error())
	}
	if gvks, _, err := s.ObjectKinds(obj); err == nil && len(gvks) > 0 && KnownNotDefaulted[KindName(gvks[0])] {
		return
	}
	s.Default(obj)
}

// KindName names a kind as [KnownNotDefaulted] and the comparison's
// report do: group/version Kind, with core for the core group.
func KindName(gvk schema.GroupVersionKind) string {
	group := gvk.Group
	if group == "" {
		group = "core"
	}
	return group + "/" + gvk.Version + " " + gvk.Kind
}
