package policy

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSemanticEqual checks semanticEqual against equality.Semantic.DeepEqual
// on pairs that differ in what the semantic comparison ignores (number
// formats, time zones, nil against empty) and in what it does not.
func TestSemanticEqual(t *testing.T) {
	base := func() *appsv1.Deployment {
		return &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				Env:       []corev1.EnvVar{{Name: "A", Value: "a"}},
			}}}}},
		}
	}
	u := func(m map[string]any) runtime.Object { return &unstructured.Unstructured{Object: m} }
	tests := []struct {
		name string
		a, b runtime.Object
		edit func(*appsv1.Deployment)
	}{
		{name: "same", edit: func(*appsv1.Deployment) {}},
		{name: "quantity format", edit: func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("1000m")
		}},
		{name: "quantity value", edit: func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("2")
		}},
		{name: "time zone", edit: func(d *appsv1.Deployment) {
			d.CreationTimestamp = metav1.NewTime(d.CreationTimestamp.In(time.FixedZone("x", 3600)))
		}},
		{name: "time value", edit: func(d *appsv1.Deployment) { d.CreationTimestamp = metav1.NewTime(d.CreationTimestamp.Add(time.Second)) }},
		{name: "nil labels", edit: func(d *appsv1.Deployment) { d.Labels = nil }},
		{name: "empty annotations", edit: func(d *appsv1.Deployment) { d.Annotations = map[string]string{} }},
		{name: "label value", edit: func(d *appsv1.Deployment) { d.Labels["app"] = "api" }},
		{name: "label key", edit: func(d *appsv1.Deployment) { d.Labels = map[string]string{"tier": "web"} }},
		{name: "empty env", edit: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{} }},
		{name: "nil tolerations against empty", edit: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Tolerations = []corev1.Toleration{} }},
		{name: "replicas set", edit: func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32) }},
		{name: "extra container", edit: func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "d"})
		}},
		{name: "nil resources", edit: func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Resources.Limits = nil }},
		{name: "unstructured equal", a: u(map[string]any{"a": []any{int64(1), "x", nil}, "b": map[string]any{}}), b: u(map[string]any{"a": []any{int64(1), "x", nil}, "b": map[string]any{}})},
		{name: "unstructured nil against empty", a: u(map[string]any{"b": map[string]any{}}), b: u(map[string]any{"b": map[string]any(nil)})},
		{name: "unstructured nil value", a: u(map[string]any{"b": nil}), b: u(map[string]any{"b": map[string]any{}})},
		{name: "unstructured number types", a: u(map[string]any{"n": int64(1)}), b: u(map[string]any{"n": float64(1)})},
		{name: "unstructured missing key", a: u(map[string]any{"a": "x"}), b: u(map[string]any{"b": "x"})},
		{name: "typed against unstructured", a: base(), b: u(map[string]any{})},
		{name: "nil object", a: base(), b: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.a, tc.b
			if tc.edit != nil {
				d := base()
				tc.edit(d)
				a, b = base(), d
			}
			want := equality.Semantic.DeepEqual(a, b)
			if got := semanticEqual(a, b); got != want {
				t.Errorf("semanticEqual = %v, want %v (equality.Semantic)", got, want)
			}
			if got := semanticEqual(b, a); got != want {
				t.Errorf("semanticEqual (swapped) = %v, want %v", got, want)
			}
			if _, ok := fastSemanticEqual(a, b); !ok {
				t.Errorf("fastSemanticEqual did not decide")
			}
		})
	}
}
