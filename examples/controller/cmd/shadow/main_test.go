package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const candidate = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"]}
  validations:
  - expression: "object.spec.replicas <= 3"
    message: "at most 3 replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  validationActions: [Deny]
`

// TestRun checks the report against a controller-runtime fake cluster.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "candidate.yaml")
	if err := os.WriteFile(file, []byte(candidate), 0o600); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	replicas := func(n int32) *int32 { return &n }
	c := crfake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "ok"}, Spec: appsv1.DeploymentSpec{Replicas: replicas(2)}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "big"}, Spec: appsv1.DeploymentSpec{Replicas: replicas(9)}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "gone", Name: "orphan"}, Spec: appsv1.DeploymentSpec{Replicas: replicas(1)}},
	).Build()
	for _, op := range []string{"CREATE", "UPDATE"} {
		t.Run(op, func(t *testing.T) {
			var out, stderr bytes.Buffer
			err := run(t.Context(), []string{"-f", file, "-operation", op}, &out, &stderr, c)
			if !errors.Is(err, errDenials) {
				t.Fatalf("run() error = %v, want errDenials; stderr %s", err, stderr.String())
			}
			want := []string{
				`DENY apps/v1, Kind=Deployment a/big: deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas' denied request: at most 3 replicas`,
				`DENY apps/v1, Kind=Deployment gone/orphan: namespaces "gone" not found`,
				"2 objects would be denied, 0 warned",
			}
			if got := strings.TrimSpace(out.String()); got != strings.Join(want, "\n") {
				t.Errorf("output:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
		})
	}
	t.Run("errors", func(t *testing.T) {
		for _, args := range [][]string{nil, {"-f", file, "-operation", "DELETE"}, {"-f", filepath.Join(dir, "nope.yaml")}} {
			if err := run(t.Context(), args, &bytes.Buffer{}, &bytes.Buffer{}, c); err == nil || errors.Is(err, errDenials) {
				t.Errorf("run(%q) error = %v, want a usage error", args, err)
			}
		}
	})
}
