package defaulting

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestPullPolicyFor(t *testing.T) {
	sha := strings.Repeat("a", 64)
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.25", corev1.PullIfNotPresent},
		{"nginx:LATEST", corev1.PullIfNotPresent},
		{"nginx@sha256:" + sha, corev1.PullIfNotPresent},
		{"nginx:latest@sha256:" + sha, corev1.PullAlways},
		{"localhost:5000/team/app", corev1.PullAlways},
		{"[::1]:5000/app:latest", corev1.PullAlways},
		{"Example.com/app", corev1.PullAlways},
		// Not references: the server leaves them to validation.
		{"", corev1.PullIfNotPresent},
		{"NGINX", corev1.PullIfNotPresent},
		{sha, corev1.PullIfNotPresent},
		{"nginx@sha256:" + sha[1:], corev1.PullIfNotPresent},
		{"nginx@md5:" + sha[:32], corev1.PullIfNotPresent},
		{"nginx@sha256:" + strings.ToUpper(sha), corev1.PullIfNotPresent},
		{strings.Repeat("a", 256), corev1.PullIfNotPresent},
		{strings.Repeat("a", 247), corev1.PullAlways}, // 255 with library/
		{strings.Repeat("a", 248), corev1.PullIfNotPresent},
		{"nginx:" + strings.Repeat("t", 129), corev1.PullIfNotPresent},
	}
	for _, tt := range tests {
		if got := pullPolicyFor(tt.image); got != tt.want {
			t.Errorf("pullPolicyFor(%q) = %s, want %s", tt.image, got, tt.want)
		}
	}
}

func TestRegisterDefaultsCoreKinds(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	Register(s)
	tests := []struct {
		name      string
		obj, want runtime.Object
	}{{
		name: "pod list",
		obj:  &corev1.PodList{Items: []corev1.Pod{{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1"}}}}}},
		want: &corev1.PodList{Items: []corev1.Pod{{
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "c", Image: "nginx:1", ImagePullPolicy: corev1.PullIfNotPresent,
					TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				}},
				RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptrTo[int64](30),
				DNSPolicy: corev1.DNSClusterFirst, SecurityContext: &corev1.PodSecurityContext{},
				SchedulerName: corev1.DefaultSchedulerName, EnableServiceLinks: ptrTo(true),
			},
		}}},
	}, {
		name: "service",
		obj:  &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}},
		want: &corev1.Service{Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, SessionAffinity: corev1.ServiceAffinityNone,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
			InternalTrafficPolicy: ptrTo(corev1.ServiceInternalTrafficPolicyCluster),
		}},
	}, {
		name: "a kind the API server does not default",
		obj:  &corev1.Binding{},
		want: &corev1.Binding{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.Default(tt.obj)
			if diff := cmp.Diff(tt.want, tt.obj); diff != "" {
				t.Errorf("defaulted (-want +got):\n%s", diff)
			}
		})
	}
}

// Register overrides whatever defaulting function a scheme already had
// for a kind vapkit does not default.
func TestRegisterReplacesForeignFunctions(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddTypeDefaultingFunc(&corev1.Binding{}, func(obj any) { obj.(*corev1.Binding).Target.Name = "foreign" })
	Register(s)
	b := &corev1.Binding{}
	s.Default(b)
	if b.Target.Name != "" {
		t.Errorf("a foreign defaulting function ran: %+v", b)
	}
}
