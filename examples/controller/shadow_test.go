package controller

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
	}
}

// TestShadow checks that the objects a candidate policy would deny are
// reported, in order, from a controller-runtime fake client.
func TestShadow(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := crfake.NewClientBuilder().WithScheme(scheme).WithObjects(
		namespace("a"), namespace("b"),
		deployment("b", "big", 9), deployment("a", "small", 1), deployment("a", "huge", 50),
	).Build()
	m, err := manifest.Load([]byte(strings.ReplaceAll(replicaPolicy, "LIMIT", "3")), "candidate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{Namespaces: &ClientNamespaces{Reader: c}})
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := manifest.NewResourceMapper()
	if err != nil {
		t.Fatal(err)
	}
	kinds, skipped := KindsOf(mapper, m.Policies)
	if len(kinds) != 1 || kinds[0] != (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) || len(skipped) != 0 {
		t.Fatalf("KindsOf() = %v, %v; want Deployment only", kinds, skipped)
	}
	findings, err := (&Shadow{Reader: c, Evaluator: ev, Kinds: kinds}).Run(t.Context())
	if err != nil {
		t.Fatalf("Run() error = %v", err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.Namespace+"/"+f.Name)
		if !f.Denied || !strings.Contains(f.Message, "at most 3 replicas") {
			t.Errorf("finding %+v, want a denial naming the limit", f)
		}
	}
	if strings.Join(got, ",") != "a/huge,b/big" {
		t.Errorf("findings = %v, want a/huge, b/big", got)
	}
}
