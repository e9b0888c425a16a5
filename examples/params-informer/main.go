// Command params-informer shows how a controller feeds vapkit's parameter
// lookups from a cache it already keeps up to date, such as a client-go
// informer, without vapkit depending on client-go.
//
//	go run ./examples/params-informer
//
// vapkit asks for parameter objects through the one-method interface
// [params.Source]; [params.SourceFunc] turns any function into one. The
// policies are compiled once; every Evaluate call asks the source again, so
// when the cache changes the next request sees the new parameters without
// recompiling. Here the cache is a map guarded by a sync.RWMutex, filled and
// changed the way informer events would change it.
//
// With client-go the function is a few lines over a dynamic informer's
// lister (a lister's NotFound error may be returned as is; vapkit treats it
// as "nothing found"):
//
//	src := params.SourceFunc(func(ctx context.Context, q params.Query) ([]runtime.Object, error) {
//		mapping, err := restMapper.RESTMapping(q.Kind.GroupKind(), q.Kind.Version)
//		if err != nil {
//			return nil, err
//		}
//		lister := factory.ForResource(mapping.Resource).Lister()
//		var ns cache.GenericNamespaceLister = lister
//		if q.Namespace != "" {
//			ns = lister.ByNamespace(q.Namespace)
//		}
//		if q.Name != "" {
//			obj, err := ns.Get(q.Name)
//			if err != nil {
//				return nil, err
//			}
//			return []runtime.Object{obj}, nil
//		}
//		return ns.List(q.Selector)
//	})
//
// The same shape serves namespaces through [matching.NamespaceGetterFunc].
//
// Objects handed to vapkit must not change afterwards: informers replace
// objects on update instead of modifying them, and so does this cache.
package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

//go:embed policy.yaml
var policyYAML []byte

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "params-informer:", err)
		os.Exit(1)
	}
}

// objectCache is a stand-in for an informer's indexer: the latest version
// of every object, keyed by kind and "namespace/name". It is safe for
// concurrent use; stored objects are never modified, only replaced.
type objectCache struct {
	mu    sync.RWMutex
	items map[schema.GroupVersionKind]map[string]*unstructured.Unstructured
}

func newObjectCache() *objectCache {
	return &objectCache{items: map[schema.GroupVersionKind]map[string]*unstructured.Unstructured{}}
}

func cacheKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// upsert stores a copy of obj, as an informer's add and update events do.
func (c *objectCache) upsert(obj *unstructured.Unstructured) {
	obj = obj.DeepCopy()
	gvk := obj.GroupVersionKind()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items[gvk] == nil {
		c.items[gvk] = map[string]*unstructured.Unstructured{}
	}
	c.items[gvk][cacheKey(obj.GetNamespace(), obj.GetName())] = obj
}

// remove deletes an object, as an informer's delete event does.
func (c *objectCache) remove(gvk schema.GroupVersionKind, namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items[gvk], cacheKey(namespace, name))
}

// get returns the object or a NotFound error, as a lister does.
func (c *objectCache) get(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if obj, ok := c.items[gvk][cacheKey(namespace, name)]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind)}, name)
}

// list returns the objects of gvk in namespace ("" for all) whose labels
// match sel.
func (c *objectCache) list(gvk schema.GroupVersionKind, namespace string, sel labels.Selector) []*unstructured.Unstructured {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*unstructured.Unstructured
	for _, obj := range c.items[gvk] {
		if namespace != "" && obj.GetNamespace() != namespace {
			continue
		}
		if sel.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, obj)
		}
	}
	return out
}

// paramSource answers vapkit's parameter queries from the cache.
func paramSource(c *objectCache) params.Source {
	return params.SourceFunc(func(_ context.Context, q params.Query) ([]runtime.Object, error) {
		if q.Name != "" {
			obj, err := c.get(q.Kind, q.Namespace, q.Name)
			if err != nil {
				return nil, err // NotFound means "no param"
			}
			return []runtime.Object{obj}, nil
		}
		var out []runtime.Object
		for _, obj := range c.list(q.Kind, q.Namespace, q.Selector) {
			out = append(out, obj) // order does not matter: vapkit sorts
		}
		return out, nil
	})
}

// namespaceSource answers namespace lookups from the cache.
func namespaceSource(c *objectCache) matching.NamespaceGetter {
	nsKind := corev1.SchemeGroupVersion.WithKind("Namespace")
	return matching.NamespaceGetterFunc(func(_ context.Context, name string) (*corev1.Namespace, error) {
		u, err := c.get(nsKind, "", name)
		if err != nil {
			return nil, err
		}
		ns := &corev1.Namespace{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ns); err != nil {
			return nil, err
		}
		return ns, nil
	})
}

var configMapKind = corev1.SchemeGroupVersion.WithKind("ConfigMap")

func namespace(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name, "labels": map[string]any{corev1.LabelMetadataName: name}},
	}}
}

func limitConfigMap(namespace, max string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "replica-limit", "namespace": namespace},
		"data":     map[string]any{"max": max},
	}}
}

// createDeployment is the request for creating a Deployment.
func createDeployment(namespace, name string, replicas int64) *policy.Request {
	return &policy.Request{
		Operation: admissionv1.Create,
		Kind:      schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      name,
		Namespace: namespace,
		Object: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": namespace},
			"spec":     map[string]any{"replicas": replicas},
		}},
		Options: &metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}},
	}
}

func run(ctx context.Context, out io.Writer) error {
	m, err := manifest.Load(policyYAML, "policy.yaml")
	if err != nil {
		return err
	}
	c := newObjectCache()
	// Compile once; the evaluator keeps asking the cache.
	ev, err := policy.Compile(m.Policies, m.Bindings, policy.Options{
		Params:     paramSource(c),
		Namespaces: namespaceSource(c),
	})
	if err != nil {
		return err
	}
	check := func(step string, req *policy.Request) error {
		d, err := ev.Evaluate(ctx, req)
		if err != nil {
			return err
		}
		verdict := "allowed"
		if !d.Allowed {
			verdict = "denied: " + d.Status.Message
		}
		_, err = fmt.Fprintf(out, "%-27s %s/%s: %s\n", step, req.Namespace, req.Name, verdict)
		return err
	}

	steps := []struct {
		name  string
		event func()
		reqs  []*policy.Request
	}{
		{"initial sync", func() {
			c.upsert(namespace("team-a"))
			c.upsert(namespace("team-b"))
			c.upsert(limitConfigMap("team-a", "3"))
		}, []*policy.Request{createDeployment("team-a", "web", 3), createDeployment("team-a", "api", 5), createDeployment("team-b", "web", 5)}},
		{"team-a limit raised to 10", func() { c.upsert(limitConfigMap("team-a", "10")) },
			[]*policy.Request{createDeployment("team-a", "api", 5)}},
		{"team-b limit added", func() { c.upsert(limitConfigMap("team-b", "2")) },
			[]*policy.Request{createDeployment("team-b", "web", 5)}},
		{"team-a limit deleted", func() { c.remove(configMapKind, "team-a", "replica-limit") },
			[]*policy.Request{createDeployment("team-a", "api", 5)}},
	}
	for _, s := range steps {
		s.event()
		for _, req := range s.reqs {
			if err := check(s.name, req); err != nil {
				return err
			}
		}
	}
	return nil
}
