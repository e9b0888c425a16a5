package celvalue_test

import (
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// TestTypedStrings reads string fields, string list elements and string
// map entries: each is the Go string as a types.String, and reading a
// field of a struct already read allocates nothing.
func TestTypedStrings(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "shop"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Image: "registry.example.com/a:1", Args: []string{"--x", ""}, ImagePullPolicy: corev1.PullAlways},
		}},
	}
	obj := celvalue.TypedValue(pod)
	c := field(obj, types.String("spec"), types.String("containers")).(traits.Lister).Get(types.Int(0))
	for _, tc := range []struct {
		got  any
		want string
	}{
		{field(obj, types.String("metadata"), types.String("name")), "web"},
		{field(obj, types.String("metadata"), types.String("labels"), types.String("app")), "shop"},
		{field(c, types.String("image")), "registry.example.com/a:1"},
		{field(c, types.String("imagePullPolicy")), "Always"},
		{field(c, types.String("args")).(traits.Lister).Get(types.Int(0)), "--x"},
		{field(c, types.String("args")).(traits.Lister).Get(types.Int(1)), ""},
	} {
		if s, ok := tc.got.(types.String); !ok || string(s) != tc.want {
			t.Errorf("read %#v, want types.String(%q)", tc.got, tc.want)
		}
	}
	image := types.String("image")
	container := &pod.Spec.Containers[0]
	alone := testing.AllocsPerRun(10, func() { celvalue.TypedValue(container) })
	read := testing.AllocsPerRun(10, func() { celvalue.TypedValue(container).(traits.Mapper).Find(image) })
	if read != alone {
		t.Errorf("converting a string field allocates %v times, want 0", read-alone)
	}
}
