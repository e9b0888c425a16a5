package policy

import (
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/celvalue"
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
			// The lazy typed request the evaluator uses is the same CEL
			// value: equal as a whole, with the same keys.
			typed := celvalue.TypedValue(admissionRequest(&r, gvr, gvk, options))
			for _, expr := range []string{"a == b", "b == a", "a.all(k, k in b) && b.all(k, k in a)", "size(a) == size(b)"} {
				if v := evalCEL(t, expr, typed, got); v != types.True {
					t.Errorf("%s = %v for the typed request %v and the map %v", expr, v, typed, got)
				}
			}
		})
	}
}

// evalCEL evaluates expr with dyn variables a and b.
func evalCEL(t *testing.T, expr string, a, b any) ref.Val {
	t.Helper()
	env, err := cel.NewEnv(cel.Variable("a", cel.DynType), cel.Variable("b", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := prg.Eval(map[string]any{"a": a, "b": b})
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// TestNamespaceTrimmed checks that namespaceObject derived from the whole
// namespace equals the conversion of the API server's trimmed copy.
func TestNamespaceTrimmed(t *testing.T) {
	now := metav1.Now()
	grace := int64(30)
	ns := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "team-a", GenerateName: "team-", UID: "u-1", ResourceVersion: "7", Generation: 3,
			CreationTimestamp: now, DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace,
			Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{"a": "b"},
			Finalizers: []string{"f"}, OwnerReferences: []metav1.OwnerReference{{Name: "o"}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
		},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
	for _, in := range []*corev1.Namespace{ns, {ObjectMeta: metav1.ObjectMeta{Name: "bare"}}} {
		st := &requestState{perRequest: perRequest{ns: in}}
		want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.Namespace{
			Spec: in.Spec, Status: in.Status,
			ObjectMeta: metav1.ObjectMeta{
				Name: in.Name, GenerateName: in.GenerateName, Namespace: in.Namespace, UID: in.UID,
				ResourceVersion: in.ResourceVersion, Generation: in.Generation,
				CreationTimestamp: in.CreationTimestamp, DeletionTimestamp: in.DeletionTimestamp,
				DeletionGracePeriodSeconds: in.DeletionGracePeriodSeconds,
				Labels:                     in.Labels, Annotations: in.Annotations, Finalizers: in.Finalizers,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, st.namespaceTrimmed()); diff != "" {
			t.Errorf("namespaceTrimmed(%s) mismatch (-want +got):\n%s", in.Name, diff)
		}
		whole := st.namespaceWhole().(map[string]any)
		if _, ok := whole["apiVersion"]; ok {
			t.Errorf("namespaceWhole(%s) has apiVersion; the server's informer objects have none", in.Name)
		}
	}
}
