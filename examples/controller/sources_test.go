package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy/manifest"
)

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelMetadataName: name}}}
}

func configMap(ns, name string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
	}
}

// TestNamespaceGetters checks both getters against fakes: a namespace is
// found, a missing one is the API server's exact NotFound, and the lister
// falls back to the client.
func TestNamespaceGetters(t *testing.T) {
	onlyInClient := namespace("fresh")
	client := fake.NewClientset(namespace("prod"), onlyInClient)
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := factory.Core().V1().Namespaces()
	if err := lister.Informer().GetIndexer().Add(namespace("prod")); err != nil {
		t.Fatal(err)
	}
	getters := map[string]matching.NamespaceGetter{
		"lister":         &ListerNamespaces{Lister: lister.Lister()},
		"lister+client":  &ListerNamespaces{Lister: lister.Lister(), Client: client},
		"runtime client": &ClientNamespaces{Reader: crfake.NewClientBuilder().WithObjects(namespace("prod"), onlyInClient).Build()},
	}
	for name, g := range getters {
		t.Run(name, func(t *testing.T) {
			ns, err := g.GetNamespace(t.Context(), "prod")
			if err != nil || ns.Name != "prod" {
				t.Fatalf("GetNamespace(prod) = %v, %v", ns, err)
			}
			_, err = g.GetNamespace(t.Context(), "nope")
			if !apierrors.IsNotFound(err) || err.Error() != `namespaces "nope" not found` {
				t.Errorf("GetNamespace(nope) error = %v, want the API server's NotFound", err)
			}
			ns, err = g.GetNamespace(t.Context(), "fresh")
			if name == "lister" {
				if !apierrors.IsNotFound(err) {
					t.Errorf("GetNamespace(fresh) without client = %v, %v; want NotFound", ns, err)
				}
			} else if err != nil || ns.Name != "fresh" {
				t.Errorf("GetNamespace(fresh) = %v, %v; want it from the client", ns, err)
			}
		})
	}
}

// TestParamSources checks both sources against fakes: by name, by
// selector, cluster-wide, and a missing name as nothing found.
func TestParamSources(t *testing.T) {
	objs := []runtime.Object{
		configMap("a", "one", map[string]string{"tier": "x"}),
		configMap("a", "two", map[string]string{"tier": "y"}),
		configMap("b", "three", map[string]string{"tier": "x"}),
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var unstr []runtime.Object
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		unstr = append(unstr, &unstructured.Unstructured{Object: m})
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{{Version: "v1", Resource: "configmaps"}: "ConfigMapList"}, unstr...)
	mapper, err := manifest.NewResourceMapper()
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	sources := map[string]params.Source{
		"informer": &InformerParams{Factory: dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0), Resources: mapper, Stop: stop},
		"client":   &ClientParams{Reader: crfake.NewClientBuilder().WithScheme(scheme).WithRuntimeObjects(objs...).Build()},
	}
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	tier := func(v string) labels.Selector { return labels.SelectorFromSet(labels.Set{"tier": v}) }
	tests := []struct {
		name string
		q    params.Query
		want []string
	}{
		{"by name", params.Query{Kind: cm, Namespace: "a", Name: "two"}, []string{"a/two"}},
		{"missing name", params.Query{Kind: cm, Namespace: "a", Name: "nope"}, nil},
		{"by selector in a namespace", params.Query{Kind: cm, Namespace: "a", Selector: tier("x")}, []string{"a/one"}},
		{"by selector everywhere", params.Query{Kind: cm, Selector: tier("x")}, []string{"a/one", "b/three"}},
	}
	for name, src := range sources {
		for _, tc := range tests {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				got, err := src.Find(t.Context(), tc.q)
				if err != nil && !apierrors.IsNotFound(err) {
					t.Fatalf("Find() error = %v", err)
				}
				var names []string
				for _, o := range got {
					m := o.(client.Object)
					names = append(names, m.GetNamespace()+"/"+m.GetName())
				}
				if strings.Join(sortStrings(names), ",") != strings.Join(tc.want, ",") {
					t.Errorf("Find(%v) = %v, want %v", tc.q, names, tc.want)
				}
			})
		}
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}
