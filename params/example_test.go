package params_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/params"
)

// limit builds a ReplicaLimit custom resource.
func limit(namespace, name, tier string, maxReplicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion":  "rules.example.com/v1",
		"kind":        "ReplicaLimit",
		"maxReplicas": maxReplicas,
	}}
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(map[string]string{"tier": tier})
	return u
}

func Example() {
	src, err := params.NewStatic(
		limit("team-a", "tiny", "prod", 2),
		limit("team-a", "small", "prod", 5),
		limit("team-a", "big", "dev", 50),
		limit("team-b", "other", "prod", 0),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	paramKind := &admissionregistrationv1.ParamKind{APIVersion: "rules.example.com/v1", Kind: "ReplicaLimit"}
	deny := admissionregistrationv1.DenyAction

	requests := []struct {
		title string
		ref   *admissionregistrationv1.ParamRef
		ns    string
	}{
		{"selector in the request namespace", &admissionregistrationv1.ParamRef{
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}},
			ParameterNotFoundAction: &deny,
		}, "team-a"},
		{"name in an explicit namespace", &admissionregistrationv1.ParamRef{
			Name: "other", Namespace: "team-b", ParameterNotFoundAction: &deny,
		}, "team-a"},
		{"missing name with Deny", &admissionregistrationv1.ParamRef{
			Name: "missing", ParameterNotFoundAction: &deny,
		}, "team-a"},
		{"cluster-scoped request", &admissionregistrationv1.ParamRef{
			Name: "tiny", ParameterNotFoundAction: &deny,
		}, ""},
		{"no paramRef", nil, "team-a"},
	}
	for _, r := range requests {
		objs, err := params.Resolve(context.Background(), src, params.Request{
			ParamKind:        paramKind,
			ParamRef:         r.ref,
			Namespaced:       true,
			RequestNamespace: r.ns,
		})
		fmt.Printf("%s: ", r.title)
		switch {
		case errors.Is(err, params.ErrParamNotFound):
			fmt.Println("not found:", err)
		case err != nil:
			fmt.Println("error:", err)
		default:
			var found []string
			for _, o := range objs {
				if o == nil {
					found = append(found, "params=null")
					continue
				}
				u := o.(*unstructured.Unstructured)
				found = append(found, u.GetNamespace()+"/"+u.GetName())
			}
			fmt.Println(strings.Join(found, " "))
		}
	}
	// Output:
	// selector in the request namespace: team-a/small team-a/tiny
	// name in an explicit namespace: team-b/other
	// missing name with Deny: not found: no params found for policy binding with `Deny` parameterNotFoundAction
	// cluster-scoped request: error: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources
	// no paramRef: params=null
}

// ExampleSourceFunc serves params from a controller's own cache: here a map
// of typed ConfigMaps keyed by namespace and name, standing in for an
// informer's indexer.
func ExampleSourceFunc() {
	cache := map[[2]string]*corev1.ConfigMap{
		{"policy-config", "limits"}: {
			ObjectMeta: metav1.ObjectMeta{Namespace: "policy-config", Name: "limits"},
			Data:       map[string]string{"maxReplicas": "4"},
		},
	}
	src := params.SourceFunc(func(_ context.Context, q params.Query) ([]runtime.Object, error) {
		if q.Kind.Group != "" || q.Kind.Kind != "ConfigMap" {
			return nil, fmt.Errorf("param kind %v is not cached", q.Kind)
		}
		var out []runtime.Object
		for key, cm := range cache {
			if key[0] != q.Namespace {
				continue
			}
			if q.Name != "" && key[1] != q.Name {
				continue
			}
			if q.Selector != nil && !q.Selector.Matches(labels.Set(cm.Labels)) {
				continue
			}
			out = append(out, cm)
		}
		return out, nil // Resolve sorts, so map order does not matter
	})

	objs, err := params.Resolve(context.Background(), src, params.Request{
		ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
		ParamRef:         &admissionregistrationv1.ParamRef{Name: "limits", Namespace: "policy-config"},
		Namespaced:       true,
		RequestNamespace: "default",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range objs {
		cm := o.(*corev1.ConfigMap)
		fmt.Println(cm.Name, cm.Data["maxReplicas"])
	}
	// Output:
	// limits 4
}
