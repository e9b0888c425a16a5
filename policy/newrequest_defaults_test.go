package policy_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// TestNewRequestDefaults: built-in objects reach the request defaulted as
// kube-apiserver defaults what it decodes, typed or unstructured, without
// modifying the caller's objects; custom resources stay as given.
func TestNewRequestDefaults(t *testing.T) {
	pod := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
	}
	podU := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "p", "namespace": "ns"},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1.27"}}},
		}}
	}
	container := func(obj runtime.Object) map[string]any {
		t.Helper()
		var m map[string]any
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			m = o.Object
		default:
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				t.Fatal(err)
			}
			m = u
		}
		cs, _, _ := unstructured.NestedSlice(m, "spec", "containers")
		if len(cs) != 1 {
			t.Fatalf("containers = %v, want one", cs)
		}
		c, _ := cs[0].(map[string]any)
		return c
	}
	for _, tc := range []struct {
		name   string
		obj    runtime.Object
		pull   string // the container's imagePullPolicy in the request
		policy string // the pod's restartPolicy
	}{
		{"typed, untagged image", pod(), "Always", "Always"},
		{"unstructured, tagged image", podU(), "IfNotPresent", "Always"},
		{"already defaulted", func() runtime.Object {
			p := pod()
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
			return p
		}(), "Never", "Never"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.obj.DeepCopyObject()
			req, err := policy.NewRequest(admissionv1.Update, tc.obj, tc.obj, policy.RequestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, tc.obj); diff != "" {
				t.Errorf("NewRequest modified the object (-before +after):\n%s", diff)
			}
			for which, o := range map[string]runtime.Object{"object": req.Object, "oldObject": req.OldObject} {
				c := container(o)
				if c["imagePullPolicy"] != tc.pull || c["terminationMessagePath"] != "/dev/termination-log" {
					t.Errorf("%s container = %v, want imagePullPolicy %s and the termination message path", which, c, tc.pull)
				}
				var spec map[string]any
				if u, ok := o.(*unstructured.Unstructured); ok {
					spec, _, _ = unstructured.NestedMap(u.Object, "spec")
				} else {
					m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
					spec, _, _ = unstructured.NestedMap(m, "spec")
				}
				if spec["restartPolicy"] != tc.policy {
					t.Errorf("%s restartPolicy = %v, want %s", which, spec["restartPolicy"], tc.policy)
				}
			}
		})
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c"}}},
	}}
	m, err := manifest.Load([]byte(widgetCRD), "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policy.Compile(nil, nil, policy.Options{CRDs: m.CRDs})
	if err != nil {
		t.Fatal(err)
	}
	req, err := ev.Request(admissionv1.Create, widget, nil, policy.RequestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(widget.Object, req.Object.(*unstructured.Unstructured).Object); diff != "" {
		t.Errorf("custom resource changed (-given +request):\n%s", diff)
	}
}
