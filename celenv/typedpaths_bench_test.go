package celenv_test

import (
	"context"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/celvalue"
)

// BenchmarkTypedPolicy evaluates the image policy of the conformance
// benchmarks' one-policy workload on a typed Deployment, one fresh
// object value per iteration as per request.
func BenchmarkTypedPolicy(b *testing.B) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	var progs []*celenv.Program
	for _, expr := range []string{
		"object.spec.template.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
		"object.spec.template.spec.containers.all(c, c.image.contains(':') && !c.image.endsWith(':latest'))",
		"!has(object.spec.template.spec.initContainers) || object.spec.template.spec.initContainers.all(c, c.image.startsWith('registry.example.com/'))",
	} {
		p := scope.Compile(expr, celenv.Decls{}, cel.BoolType)
		if p.Err() != nil {
			b.Fatal(p.Err())
		}
		progs = append(progs, p)
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "web", Image: "registry.example.com/web:1.4.2"},
			{Name: "side", Image: "registry.example.com/side:2.0"},
		}}}},
	}
	set := map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"}
	var session celenv.Session
	b.ReportAllocs()
	for b.Loop() {
		in := &celenv.Input{Object: celvalue.TypedObject(d, set)}
		batch := scope.NewBatch(context.Background(), &session, in, 10_000_000)
		for _, p := range progs {
			r, err := batch.Eval(p)
			if err != nil || r.Err != nil || r.Value != types.True {
				b.Fatalf("%v %v %v", r.Value, r.Err, err)
			}
		}
		session.Reset()
	}
}
