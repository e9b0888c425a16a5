package params_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/params"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

func TestNewStaticErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		objs    []runtime.Object
		wantErr string
	}{
		{
			name:    "nil object",
			objs:    []runtime.Object{nil},
			wantErr: "params: object 0 is nil",
		},
		{
			name:    "typed nil pointer",
			objs:    []runtime.Object{obj(limitGVK, "ns", "a", nil), (*corev1.ConfigMap)(nil)},
			wantErr: "params: object 1 is nil",
		},
		{
			name:    "typed object without TypeMeta",
			objs:    []runtime.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}}},
			wantErr: "params: object 0 (*v1.ConfigMap) has no apiVersion or kind; set its TypeMeta",
		},
		{
			name:    "unstructured without kind",
			objs:    []runtime.Object{&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "x"}}}},
			wantErr: "params: object 0 (*unstructured.Unstructured) has no apiVersion or kind; set its TypeMeta",
		},
		{
			name:    "object without metadata",
			objs:    []runtime.Object{&metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}}},
			wantErr: "params: object 0 (/v1, Kind=Status): object does not implement the Object interfaces",
		},
		{
			name:    "object without name",
			objs:    []runtime.Object{obj(limitGVK, "ns", "", nil)},
			wantErr: "params: object 0 (rules.example.com/v1, Kind=ReplicaLimit) has no name",
		},
		{
			name:    "duplicate",
			objs:    []runtime.Object{obj(limitGVK, "ns", "a", nil), obj(limitGVK, "ns", "b", nil), obj(limitGVK, "ns", "a", map[string]string{"x": "y"})},
			wantErr: `params: duplicate rules.example.com/v1, Kind=ReplicaLimit "ns/a"`,
		},
		{
			name: "non-JSON unstructured value",
			objs: []runtime.Object{&unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit",
				"metadata": map[string]any{"name": "x"},
				"spec":     map[string]any{"limits": []any{int64(1), int(2)}},
			}}},
			wantErr: `params: object 0 (rules.example.com/v1, Kind=ReplicaLimit): field "spec": field "limits": index 1: unsupported value type int`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := params.NewStatic(tc.objs...)
			if err == nil {
				t.Fatalf("NewStatic() = %v, want error %q", s, tc.wantErr)
			}
			if err.Error() != tc.wantErr {
				t.Errorf("NewStatic() error = %q, want %q", err.Error(), tc.wantErr)
			}
		})
	}
}

func TestStaticFind(t *testing.T) {
	t.Parallel()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "policy-config", Labels: map[string]string{"tier": "prod"}},
		Data:       map[string]string{"maxReplicas": "4"},
	}
	s, err := params.NewStatic(
		cm,
		obj(limitGVK, "b", "x", map[string]string{"tier": "prod"}),
		obj(limitGVK, "a", "y", map[string]string{"tier": "dev"}),
		obj(limitGVK, "a", "x", map[string]string{"tier": "prod"}),
		obj(limitGVK, "", "x", nil), // a namespaced kind stored without namespace
	)
	if err != nil {
		t.Fatalf("NewStatic() error = %v", err)
	}
	prod := labels.SelectorFromSet(labels.Set{"tier": "prod"})

	tests := []struct {
		name string
		q    params.Query
		want []string
	}{
		{"typed object by name", params.Query{Kind: configMapGVK, Namespace: "policy-config", Name: "limits"}, []string{"policy-config/limits"}},
		{"typed object in other namespace", params.Query{Kind: configMapGVK, Namespace: "default", Name: "limits"}, nil},
		{"by name in namespace", params.Query{Kind: limitGVK, Namespace: "a", Name: "x"}, []string{"a/x"}},
		{"by name without namespace finds only unnamespaced", params.Query{Kind: limitGVK, Name: "x"}, []string{"/x"}},
		{"selector in namespace", params.Query{Kind: limitGVK, Namespace: "a", Selector: prod}, []string{"a/x"}},
		{"everything in namespace", params.Query{Kind: limitGVK, Namespace: "a", Selector: labels.Everything()}, []string{"a/x", "a/y"}},
		{"selector across namespaces, sorted", params.Query{Kind: limitGVK, Selector: prod}, []string{"a/x", "b/x"}},
		{"nil selector matches everything", params.Query{Kind: limitGVK}, []string{"/x", "a/x", "a/y", "b/x"}},
		{"nothing selector", params.Query{Kind: limitGVK, Selector: labels.Nothing()}, nil},
		{"unknown kind", params.Query{Kind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Namespace: "a", Selector: labels.Everything()}, nil},
		{"kind version must match", params.Query{Kind: limitGVK.GroupVersion().WithKind("replicalimit"), Namespace: "a", Name: "x"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.Find(t.Context(), tc.q)
			if err != nil {
				t.Fatalf("Find() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("Find(%v) mismatch (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

// TestStaticCopies checks that a Static is isolated from later changes to
// the objects it was built from.
func TestStaticCopies(t *testing.T) {
	t.Parallel()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "ns", Labels: map[string]string{"tier": "prod"}},
		Data:       map[string]string{"maxReplicas": "4"},
	}
	s, err := params.NewStatic(cm)
	if err != nil {
		t.Fatalf("NewStatic() error = %v", err)
	}
	cm.Data["maxReplicas"] = "400"
	cm.Labels["tier"] = "dev"

	got, err := s.Find(t.Context(), params.Query{Kind: configMapGVK, Namespace: "ns", Selector: labels.SelectorFromSet(labels.Set{"tier": "prod"})})
	if err != nil {
		t.Fatalf("Find() error = %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("Find() = %v, want one object", names(got))
	}
	if v := got[0].(*corev1.ConfigMap).Data["maxReplicas"]; v != "4" {
		t.Errorf("Find()[0].Data[maxReplicas] = %q, want %q", v, "4")
	}
}

func TestStaticNilAndEmpty(t *testing.T) {
	t.Parallel()
	var nilStatic *params.Static
	empty, err := params.NewStatic()
	if err != nil {
		t.Fatalf("NewStatic() error = %v", err)
	}
	for _, s := range []*params.Static{nilStatic, empty} {
		got, err := s.Find(t.Context(), params.Query{Kind: limitGVK})
		if err != nil || got != nil {
			t.Errorf("Find() = %v, %v, want nil, nil", got, err)
		}
	}
}
