package celvalue_test

import (
	"testing"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// benchDeployment is a defaulted Deployment with n containers, like the
// request of the conformance benchmarks.
func benchDeployment(n int) *appsv1.Deployment {
	labels := map[string]string{"app": "web", "team": "web", "env": "prod"}
	cs := make([]corev1.Container, n)
	for i := range cs {
		cs[i] = corev1.Container{
			Name:  "c",
			Image: "registry.example.com/web:1.4.2",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			},
			LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptrTo(false),
				RunAsNonRoot:             ptrTo(true),
			},
			ImagePullPolicy: corev1.PullIfNotPresent,
		}
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "prod", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(int32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:      cs,
					RestartPolicy:   corev1.RestartPolicyAlways,
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptrTo(true)},
				},
			},
		},
	}
}

// field reads the path of keys from v through the CEL map interface, as
// far as they are present. The keys are constants: boxing them allocates
// nothing, so the benchmark measures only the reads.
func field(v ref.Val, keys ...ref.Val) ref.Val {
	for _, k := range keys {
		m, ok := v.(traits.Mapper)
		if !ok {
			return v
		}
		e, found := m.Find(k)
		if !found {
			return types.NullValue
		}
		v = e
	}
	return v
}

// readPolicies reads what the conformance benchmark's policy templates
// read, rounds times, as that many policies read one shared object.
func readPolicies(obj ref.Val, rounds int) {
	for range rounds {
		spec := field(obj, types.String("spec"), types.String("template"), types.String("spec"))
		for _, k := range []ref.Val{types.String("hostNetwork"), types.String("hostPID"), types.String("hostIPC"), types.String("initContainers")} {
			spec.(traits.Mapper).Find(k)
		}
		field(spec, types.String("securityContext"), types.String("runAsNonRoot"))
		it := field(spec, types.String("containers")).(traits.Lister).Iterator()
		for it.HasNext() == types.True {
			c := it.Next()
			field(c, types.String("image"))
			limits := field(c, types.String("resources"), types.String("limits")).(traits.Mapper)
			limits.Contains(types.String("cpu"))
			limits.Get(types.String("memory"))
			field(c, types.String("securityContext"), types.String("privileged"))
			field(c, types.String("securityContext"), types.String("allowPrivilegeEscalation"))
			field(c, types.String("securityContext"), types.String("runAsNonRoot"))
			c.(traits.Mapper).Find(types.String("readinessProbe"))
			c.(traits.Mapper).Find(types.String("livenessProbe"))
		}
		field(obj, types.String("metadata"), types.String("name"))
		field(obj, types.String("metadata"), types.String("namespace"))
		labels := field(obj, types.String("metadata"), types.String("labels")).(traits.Mapper)
		labels.Get(types.String("team"))
		labels.Get(types.String("env"))
		labels.Contains(types.String("app"))
		field(obj, types.String("spec"), types.String("replicas"))
	}
}

// BenchmarkTypedRead reads a typed Deployment as policies do: the first
// round converts, later rounds read what the first converted.
func BenchmarkTypedRead(b *testing.B) {
	for _, bc := range []struct {
		name               string
		containers, rounds int
	}{
		{"once", 2, 1},
		{"shared-10", 2, 10},
		{"containers-50", 50, 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := benchDeployment(bc.containers)
			set := map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"}
			b.ReportAllocs()
			for b.Loop() {
				readPolicies(celvalue.TypedObject(d, set), bc.rounds)
			}
		})
	}
}
