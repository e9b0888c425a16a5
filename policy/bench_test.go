package policy_test

import (
	"context"
	"fmt"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy"
)

// benchPolicies returns n policies with one binding each; the first `match`
// of them select Deployments, the others select a resource the benchmark
// request never uses.
func benchPolicies(n, match int) ([]*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	var ps []*admissionregistrationv1.ValidatingAdmissionPolicy
	var bs []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	fail := admissionregistrationv1.Fail
	equivalent := admissionregistrationv1.Equivalent
	for i := range n {
		resource := "deployments"
		if i >= match {
			resource = fmt.Sprintf("widgets%d", i)
		}
		name := fmt.Sprintf("p%05d", i)
		ps = append(ps, &admissionregistrationv1.ValidatingAdmissionPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				FailurePolicy: &fail,
				MatchConstraints: &admissionregistrationv1.MatchResources{
					NamespaceSelector: &metav1.LabelSelector{},
					ObjectSelector:    &metav1.LabelSelector{},
					MatchPolicy:       &equivalent,
					ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{resource}},
					}}},
				},
				Validations: []admissionregistrationv1.Validation{
					{Expression: "object.spec.replicas <= 5", Message: "too many replicas"},
					{Expression: "object.spec.template.spec.containers.all(c, !c.image.endsWith(':latest'))"},
					{Expression: "has(object.metadata.labels) && 'app' in object.metadata.labels"},
				},
			},
		})
		bs = append(bs, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-binding"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
				PolicyName:        name,
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			},
		})
	}
	return ps, bs
}

func benchRequest() *policy.Request {
	replicas := int32(3)
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "web", Image: "nginx:1.27"}, {Name: "sidecar", Image: "envoy:1.30"},
			}}},
		},
	}
	r := deployment("web", 3)
	r.Namespace = "default"
	r.Object = d
	return r
}

var benchNamespaces = matching.NamespaceGetterFunc(func(_ context.Context, name string) (*corev1.Namespace, error) {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
})

func BenchmarkCompile(b *testing.B) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 100} {
		ps, bs := benchPolicies(n, n)
		b.Run(fmt.Sprintf("%dpolicies", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := policy.Compile(ps, bs, policy.Options{Env: env}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEvaluate(b *testing.B) {
	for _, tc := range []struct {
		name     string
		n, match int
	}{
		{"1policies/match", 1, 1},
		{"10policies/match", 10, 10},
		{"100policies/match10", 100, 10},
		{"10policies/nomatch", 10, 0},
		{"10000policies/nomatch", 10000, 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ps, bs := benchPolicies(tc.n, tc.match)
			ev, err := policy.Compile(ps, bs, policy.Options{Namespaces: benchNamespaces})
			if err != nil {
				b.Fatal(err)
			}
			req := benchRequest()
			b.ReportAllocs()
			for b.Loop() {
				d, err := ev.Evaluate(b.Context(), req)
				if err != nil || !d.Allowed {
					b.Fatalf("Evaluate() = %v, %v; want allowed", d, err)
				}
			}
		})
	}
}

func BenchmarkEvaluateParallel(b *testing.B) {
	ps, bs := benchPolicies(10, 10)
	ev, err := policy.Compile(ps, bs, policy.Options{Namespaces: benchNamespaces})
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d, err := ev.Evaluate(context.Background(), req)
			if err != nil || !d.Allowed {
				b.Errorf("Evaluate() = %v, %v; want allowed", d, err)
				return
			}
		}
	})
}
