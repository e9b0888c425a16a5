package kubedefaults

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// typicalCoreObjects are hand-written core/v1 objects as users write them,
// compared beside the generated ones.
func typicalCoreObjects() []runtime.Object {
	return []runtime.Object{
		&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
	}
}
