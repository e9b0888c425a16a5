// Command quickstart compiles the replica-limit policies of the Kubernetes
// documentation once and evaluates a few Deployments against them, printing
// each decision as a person wants to read it.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

//go:embed cluster.yaml
var clusterYAML []byte

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func deployment(namespace, name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		},
	}
}

func run(ctx context.Context, out io.Writer) error {
	m, err := manifest.Load(clusterYAML, "cluster.yaml")
	if err != nil {
		return err
	}
	src, err := params.NewStatic(m.Objects...)
	if err != nil {
		return err
	}
	// Every namespaced request a binding matches has its Namespace looked
	// up, as the API server does (for namespaceSelector and
	// namespaceObject). A Namespace the getter does not know denies the
	// request with the server's 404 `namespaces "test" not found`; a nil
	// getter denies them all, and Evaluator.Issues says so. Here the
	// Namespaces come from cluster.yaml; in a cluster, use an informer
	// (examples/controller).
	namespaces := matching.NewNamespaceMap(m.Namespaces...)
	// Compile once; the Evaluator is immutable and safe for concurrent use.
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{Params: src, Namespaces: namespaces, CRDs: m.CRDs})
	if err != nil {
		return err
	}
	for _, d := range []*appsv1.Deployment{
		deployment("test", "small", 2),
		deployment("test", "medium", 4),
		deployment("test", "large", 8),
		deployment("prod", "large", 8),
		deployment("prod", "huge", 500),
	} {
		// Kind, resource, name and namespace come from the object.
		req, err := ev.Request(admissionv1.Create, d, nil, policy.RequestOptions{
			UserInfo: authenticationv1.UserInfo{Username: "alice"},
		})
		if err != nil {
			return err
		}
		dec, err := ev.Evaluate(ctx, req)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s/%s with %d replicas: ", d.Namespace, d.Name, *d.Spec.Replicas)
		if dec.Allowed {
			fmt.Fprintln(out, "allowed")
		} else {
			fmt.Fprintf(out, "denied (%d %s)\n    %s\n", dec.Status.Code, dec.Status.Reason, dec.Status.Message)
		}
		for _, w := range dec.Warnings {
			fmt.Fprintf(out, "    warning: %s\n", w)
		}
		for _, k := range sortedKeys(dec.AuditAnnotations) {
			fmt.Fprintf(out, "    audit %s: %s\n", k, dec.AuditAnnotations[k])
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
