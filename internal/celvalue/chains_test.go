package celvalue_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// TestSelectPath reads paths with SelectPath and field by field through
// the CEL map interface, in both orders on shared values and on fresh
// ones: the values must be the same, down to the identity of the lazy
// maps each order leaves cached, and SelectPath must report false
// wherever a field is absent or not a map on the way.
func TestSelectPath(t *testing.T) {
	one := int32(1)
	objects := map[string]func() any{
		"deployment": func() any { return benchDeployment(2) },
		"sparse": func() any {
			return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "x", CreationTimestamp: metav1.Now()},
				Spec: appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{}}}}}
		},
	}
	paths := []string{
		"spec", "spec.template.spec.containers", "spec.template.spec", "spec.template.spec.securityContext.runAsNonRoot",
		"spec.template.spec.initContainers", "spec.template.metadata.labels.app", "spec.template.spec.securityContext",
		"spec.strategy.rollingUpdate.maxSurge", "spec.selector.matchLabels.app", "metadata.creationTimestamp",
		"metadata.creationTimestamp.x", "metadata.name.x", "spec.replicas", "spec.nosuch.x", "kind", "apiVersion",
		"spec.template.spec.containers.x",
	}
	for name, obj := range objects {
		for _, path := range paths {
			names := strings.Split(path, ".")
			keys := make([]ref.Val, len(names))
			for i, n := range names {
				keys[i] = types.String(n)
			}
			set := map[string]string{"kind": "Deployment", "apiVersion": "apps/v1"}
			shared := celvalue.TypedObject(obj(), set)
			got, ok := celvalue.SelectPath(shared, names, keys)
			want, wantOK := selectEach(celvalue.TypedObject(obj(), set), keys)
			if ok != wantOK || (ok && !reflect.DeepEqual(got.Value(), want.Value())) {
				t.Errorf("%s %s: SelectPath %v, %v; field by field %v, %v", name, path, got, ok, want, wantOK)
			}
			again, againOK := selectEach(shared, keys)
			if ok && (!againOK || again != got) {
				t.Errorf("%s %s: field by field after SelectPath gives %p, want the same value %p", name, path, again, got)
			}
			first := celvalue.TypedObject(obj(), set)
			each, _ := selectEach(first, keys)
			if after, afterOK := celvalue.SelectPath(first, names, keys); ok && (!afterOK || after != each) {
				t.Errorf("%s %s: SelectPath after field by field gives %p, want the same value %p", name, path, after, each)
			}
		}
	}
}

// selectEach reads keys one by one as cel-go's qualifiers do, reporting
// false where one is absent, not a map or a conversion error.
func selectEach(v ref.Val, keys []ref.Val) (ref.Val, bool) {
	for _, k := range keys {
		m, ok := v.(traits.Mapper)
		if !ok {
			return nil, false
		}
		e, found := m.Find(k)
		if !found || types.IsError(e) {
			return nil, false
		}
		v = e
	}
	return v, true
}
