package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
)

// TestAdmissionRequestJSON checks the hand-built `request` value against
// what the API server's converter makes of the same AdmissionRequest.
func TestAdmissionRequestJSON(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	tests := []struct {
		name string
		req  Request
	}{
		{name: "minimal", req: Request{Operation: admissionv1.Create}},
		{name: "full", req: Request{
			Operation: admissionv1.Update, Name: "web", Namespace: "ns", SubResource: "scale", DryRun: true,
			Kind:     schema.GroupVersionKind{Group: "apps", Version: "v1beta1", Kind: "Deployment"},
			Resource: schema.GroupVersionResource{Group: "apps", Version: "v1beta1", Resource: "deployments"},
			UserInfo: authenticationv1.UserInfo{Username: "bob", UID: "42", Groups: []string{"a", "b"},
				Extra: map[string]authenticationv1.ExtraValue{"x": {"1", "2"}, "empty": {}}},
			Options: &metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, FieldManager: "m"},
		}},
		{name: "empty extra and groups", req: Request{Operation: admissionv1.Delete,
			UserInfo: authenticationv1.UserInfo{Groups: []string{}, Extra: map[string]authenticationv1.ExtraValue{}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req
			var options any
			if r.Options != nil {
				m, err := builtin.ToUnstructured(r.Options)
				if err != nil {
					t.Fatal(err)
				}
				options = m
			}
			got := admissionRequestJSON(&r, gvr, gvk, options)
			dry := r.DryRun
			want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&admissionv1.AdmissionRequest{
				Kind: metav1.GroupVersionKind(gvk), Resource: metav1.GroupVersionResource(gvr),
				SubResource: r.SubResource, RequestKind: (*metav1.GroupVersionKind)(&r.Kind),
				RequestResource: (*metav1.GroupVersionResource)(&r.Resource), RequestSubResource: r.SubResource,
				Name: r.Name, Namespace: r.Namespace, Operation: r.Operation, UserInfo: r.UserInfo,
				DryRun: &dry, Options: runtime.RawExtension{Object: r.Options},
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("admissionRequestJSON() mismatch (-converter +ours):\n%s", diff)
			}
		})
	}
}
