package typecheck_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/typecheck"
)

func TestValidateBuiltinMetadata(t *testing.T) {
	tests := []struct {
		name     string
		gvk      schema.GroupVersionKind
		metadata map[string]any
		want     []string // "field: type"
	}{
		{"valid pod", gvk("", "v1", "Pod"), map[string]any{"name": "web", "namespace": "default"}, nil},
		{"pod without namespace", gvk("", "v1", "Pod"), map[string]any{"name": "web"}, []string{"metadata.namespace: Required value"}},
		{"cluster-scoped kind in a namespace", gvk("", "v1", "Namespace"), map[string]any{"name": "team", "namespace": "default"}, nil},
		{"namespace name with a dot", gvk("", "v1", "Namespace"), map[string]any{"name": "a.b"}, []string{"metadata.name: Invalid value"}},
		{"namespace name with a colon", gvk("", "v1", "Namespace"), map[string]any{"name": "a:b"}, []string{"metadata.name: Invalid value", "metadata.labels: Invalid value"}},
		{"negative generation reset", gvk("apps", "v1", "Deployment"), map[string]any{"name": "d", "namespace": "default", "generation": int64(-1)}, nil},
		{"negative generation", gvk("", "v1", "ConfigMap"), map[string]any{"name": "c", "namespace": "default", "generation": int64(-1)}, []string{"metadata.generation: Invalid value"}},
		{"finalizer given twice", gvk("", "v1", "ConfigMap"), map[string]any{"name": "c", "namespace": "default", "finalizers": []any{"a b/c", "a b/c"}}, []string{"metadata.finalizers: Invalid value"}},
		{"pdb name", gvk("policy", "v1", "PodDisruptionBudget"), map[string]any{"name": "Web_1", "namespace": "default"}, nil},
		{"configmap name with a dot", gvk("", "v1", "ConfigMap"), map[string]any{"name": "a.b", "namespace": "default"}, nil},
		{"statefulset name with a dot", gvk("apps", "v1", "StatefulSet"), map[string]any{"name": "a.b", "namespace": "default"}, []string{"metadata.name: Invalid value"}},
		{"role name with a colon", gvk("rbac.authorization.k8s.io", "v1", "ClusterRole"), map[string]any{"name": "system:Admin"}, nil},
		{"role name with a slash", gvk("rbac.authorization.k8s.io", "v1", "Role"), map[string]any{"name": "a/b", "namespace": "default"}, []string{"metadata.name: Invalid value"}},
		{"generateName", gvk("apps", "v1", "Deployment"), map[string]any{"generateName": "web-", "namespace": "default"}, nil},
		{"bad generateName", gvk("apps", "v1", "Deployment"), map[string]any{"generateName": "Web-", "namespace": "default"}, []string{"metadata.generateName: Invalid value", "metadata.name: Invalid value"}},
		{"no name", gvk("batch", "v1", "Job"), map[string]any{"namespace": "default"}, []string{"metadata.name: Required value"}},
		{"long cronjob name", gvk("batch", "v1", "CronJob"), map[string]any{"name": strings.Repeat("c", 53), "namespace": "default"}, []string{"metadata.name: Invalid value"}},
		{"bad label and finalizer", gvk("", "v1", "Secret"), map[string]any{"name": "s", "namespace": "default", "labels": map[string]any{"a": "-x"}, "finalizers": []any{"foo"}}, []string{"metadata.labels: Invalid value", "metadata.finalizers[0]: Invalid value"}},
		{"lease finalizer", gvk("coordination.k8s.io", "v1", "Lease"), map[string]any{"name": "l", "namespace": "default", "finalizers": []any{"foo"}}, nil},
		{"metadata not a map", gvk("", "v1", "Pod"), nil, []string{"metadata: Invalid value"}},
		{"unknown kind", gvk("", "v1", "Event"), map[string]any{"name": "Bad_Name"}, nil},
		{"custom kind", gvk("example.com", "v1", "Pod"), map[string]any{"name": "Bad_Name"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": tt.metadata}}
			if tt.metadata == nil {
				u.Object["metadata"] = "x"
			}
			u.SetGroupVersionKind(tt.gvk)
			var got []string
			for _, e := range typecheck.ValidateBuiltinMetadata(u) {
				got = append(got, e.Field+": "+e.Type.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if typecheck.ValidateBuiltinMetadata(nil) != nil {
		t.Error("nil object: want no errors")
	}
}

func TestBuiltinScope(t *testing.T) {
	if !typecheck.BuiltinNamespaced(gvk("apps", "v1", "Deployment")) || typecheck.BuiltinNamespaced(gvk("", "v1", "Namespace")) {
		t.Error("BuiltinNamespaced: Deployment namespaced and Namespace not, wanted")
	}
	if !typecheck.KnowsBuiltinMetadata(gvk("", "v1", "Pod")) || typecheck.KnowsBuiltinMetadata(gvk("", "v1", "Event")) {
		t.Error("KnowsBuiltinMetadata: Pod known and Event not, wanted")
	}
}

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// FuzzValidateBuiltinMetadata: any metadata, of any known or unknown
// kind, gets an answer without a panic, the same answer twice, and the
// object is not modified.
func FuzzValidateBuiltinMetadata(f *testing.F) {
	f.Add("Pod", `{"name": "web", "namespace": "default"}`)
	f.Add("Namespace", `{"name": "a:b", "namespace": "x", "labels": {"a": "-b"}}`)
	f.Add("CronJob", `{"generateName": "Web-", "finalizers": ["foo", "foo"], "generation": -1}`)
	f.Add("Deployment", `{"ownerReferences": [{"apiVersion": "", "controller": true}, {"controller": true}]}`)
	f.Add("Role", `{"name": "a/b", "labels": {"a": 1}}`)
	f.Add("ConfigMap", `"metadata"`)
	kinds := map[string]schema.GroupVersionKind{
		"Pod": gvk("", "v1", "Pod"), "Namespace": gvk("", "v1", "Namespace"), "CronJob": gvk("batch", "v1", "CronJob"),
		"Deployment": gvk("apps", "v1", "Deployment"), "Role": gvk("rbac.authorization.k8s.io", "v1", "Role"),
		"ConfigMap": gvk("", "v1", "ConfigMap"),
	}
	f.Fuzz(func(t *testing.T, kind, metadata string) {
		var m any
		if err := json.Unmarshal([]byte(metadata), &m); err != nil {
			return
		}
		k, ok := kinds[kind]
		if !ok {
			k = gvk("example.com", "v1", kind)
		}
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": m}}
		u.SetGroupVersionKind(k)
		before := u.DeepCopy()
		first := fmt.Sprint(typecheck.ValidateBuiltinMetadata(u))
		if second := fmt.Sprint(typecheck.ValidateBuiltinMetadata(u)); first != second {
			t.Errorf("answers differ:\n%s\n%s", first, second)
		}
		if !reflect.DeepEqual(before, u) {
			t.Error("the object was modified")
		}
	})
}
