package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/policy"
)

// TestMutatingBuiltinDefaults: after each mutation, a built-in object gets
// kube-apiserver 1.37's defaults, as the API server's scheme defaults it;
// the mutated object, the patch and the request's untouched object show
// it, for typed and unstructured request objects.
func TestMutatingBuiltinDefaults(t *testing.T) {
	p, b := mutatingPolicy(t, "sidecar", "Fail", "Never",
		`apply:Object{spec: Object.spec{containers: [Object.spec.containers{name: "proxy", image: "envoy", ports: [Object.spec.containers.ports{containerPort: 9901}]}]}}`)
	p.Spec.MatchConstraints.ResourceRules[0].APIGroups = []string{""}
	p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"pods"}
	ev, err := policy.Compile(nil, nil, policy.Options{
		MutatingPolicies: []*admissionregistrationv1.MutatingAdmissionPolicy{p},
		MutatingBindings: []*admissionregistrationv1.MutatingAdmissionPolicyBinding{b}})
	if err != nil {
		t.Fatal(err)
	}
	// The request's Pod as the API server holds it: already defaulted.
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	pod.APIVersion, pod.Kind, pod.Name = "v1", "Pod", "p"
	builtin.Scheme().Default(pod)
	u, err := builtin.ToUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	wantProxy := corev1.Container{
		Name: "proxy", Image: "envoy", ImagePullPolicy: corev1.PullAlways,
		Ports:                  []corev1.ContainerPort{{ContainerPort: 9901, Protocol: corev1.ProtocolTCP}},
		TerminationMessagePath: corev1.TerminationMessagePathDefault, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
	// The patch replaces the list (containers is a keyed list the patch
	// does not merge): the new item carries the defaults.
	wantProxyJSON := map[string]any{
		"name": "proxy", "image": "envoy", "imagePullPolicy": "Always", "resources": map[string]any{},
		"ports":                  []any{map[string]any{"containerPort": float64(9901), "protocol": "TCP"}},
		"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
	}
	for name, obj := range map[string]runtime.Object{"typed": pod, "unstructured": &unstructured.Unstructured{Object: u}} {
		t.Run(name, func(t *testing.T) {
			before := obj.DeepCopyObject()
			req := &policy.Request{Operation: admissionv1.Create, Name: "p", Object: obj,
				Kind:     schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}
			d, err := ev.Evaluate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Allowed || d.Object == nil {
				t.Fatalf("Evaluate() = allowed %v, object %v; status %v; trace %v", d.Allowed, d.Object, d.Status, d.Mutations)
			}
			got := &corev1.Pod{}
			if m, ok := d.Object.(*unstructured.Unstructured); ok {
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, got); err != nil {
					t.Fatal(err)
				}
			} else {
				got = d.Object.(*corev1.Pod)
			}
			if len(got.Spec.Containers) != 2 {
				t.Fatalf("containers = %+v, want app and proxy", got.Spec.Containers)
			}
			if diff := cmp.Diff(wantProxy, got.Spec.Containers[1]); diff != "" {
				t.Errorf("added container (-want +got):\n%s", diff)
			}
			var patch []struct {
				Op, Path string
				Value    []any
			}
			if err := json.Unmarshal(d.Patch, &patch); err != nil {
				t.Fatal(err)
			}
			if len(patch) != 1 || patch[0].Op != "replace" || patch[0].Path != "/spec/containers" || len(patch[0].Value) != 2 {
				t.Fatalf("patch = %s, want one replace of /spec/containers with two containers", d.Patch)
			}
			if diff := cmp.Diff(wantProxyJSON, patch[0].Value[1]); diff != "" {
				t.Errorf("patched container (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, obj); diff != "" {
				t.Errorf("Evaluate() modified the request's object (-before +after):\n%s", diff)
			}
		})
	}
}
