package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
)

var (
	_ matching.NamespaceGetter = (*ListerNamespaces)(nil)
	_ matching.NamespaceGetter = (*ClientNamespaces)(nil)
	_ params.Source            = (*InformerParams)(nil)
	_ params.Source            = (*ClientParams)(nil)
)

// namespaceNotFound is the API server's answer for a missing namespace,
// `namespaces "prod" not found`, which a request it aborts carries as is.
// Listers and caches name the resource differently, so their NotFound
// errors are replaced by this one.
func namespaceNotFound(name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

// ListerNamespaces looks namespaces up in a client-go informer's lister,
// as the API server's admission plugin does; when the lister does not
// have a namespace and Client is set, it asks the API server, as upstream
// does for a namespace created a moment ago. Safe for concurrent use.
type ListerNamespaces struct {
	// Lister is the Namespace informer's lister; it must be synced.
	Lister corev1listers.NamespaceLister
	// Client, if set, is asked when the lister misses.
	Client kubernetes.Interface
}

// GetNamespace returns the namespace called name.
func (n *ListerNamespaces) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns, err := n.Lister.Get(name)
	if apierrors.IsNotFound(err) && n.Client != nil {
		ns, err = n.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, namespaceNotFound(name)
	}
	return ns, err
}

// ClientNamespaces looks namespaces up with a controller-runtime reader;
// a manager's client reads from its informer cache. Safe for concurrent
// use.
type ClientNamespaces struct {
	// Reader gets Namespaces; a manager's client reads its cache.
	Reader client.Reader
}

// GetNamespace returns the namespace called name.
func (n *ClientNamespaces) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	var ns corev1.Namespace
	if err := n.Reader.Get(ctx, client.ObjectKey{Name: name}, &ns); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, namespaceNotFound(name)
		}
		return nil, err
	}
	return &ns, nil
}

// InformerParams finds param objects in dynamic informers, one per param
// kind, started on first use and shared through Factory. Safe for
// concurrent use.
type InformerParams struct {
	// Factory creates and starts the informers.
	Factory dynamicinformer.DynamicSharedInformerFactory
	// Resources maps param kinds to resources: policy.NewResourceMapper
	// with the cluster's CRDs, or the evaluator's own.
	Resources policy.ResourceMapper
	// Stop ends the informers started on first use; nil runs them until
	// the process ends.
	Stop <-chan struct{}
}

// Find returns the objects of q.Kind matching q.
func (p *InformerParams) Find(ctx context.Context, q params.Query) ([]runtime.Object, error) {
	gvr, _, err := p.Resources.ResourceFor(q.Kind)
	if err != nil {
		return nil, err
	}
	inf := p.Factory.ForResource(gvr)
	p.Factory.Start(p.Stop) // starts only informers not yet started
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return nil, fmt.Errorf("informer for %v did not sync: %w", gvr, ctx.Err())
	}
	lister := inf.Lister()
	if q.Name != "" {
		var obj runtime.Object
		if q.Namespace != "" {
			obj, err = lister.ByNamespace(q.Namespace).Get(q.Name)
		} else {
			obj, err = lister.Get(q.Name)
		}
		if err != nil {
			return nil, err // NotFound means nothing found
		}
		return []runtime.Object{obj}, nil
	}
	if q.Namespace != "" {
		return lister.ByNamespace(q.Namespace).List(q.Selector)
	}
	return lister.List(q.Selector)
}

// ClientParams finds param objects with a controller-runtime reader, as
// unstructured objects; a manager's client reads them from its cache when
// the cache serves unstructured objects (client.Options.Cache.Unstructured).
// Safe for concurrent use.
type ClientParams struct {
	// Reader gets and lists the param objects as unstructured objects.
	Reader client.Reader
}

// Find returns the objects of q.Kind matching q.
func (p *ClientParams) Find(ctx context.Context, q params.Query) ([]runtime.Object, error) {
	if q.Name != "" {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(q.Kind)
		if err := p.Reader.Get(ctx, client.ObjectKey{Namespace: q.Namespace, Name: q.Name}, u); err != nil {
			return nil, err // NotFound means nothing found
		}
		return []runtime.Object{u}, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(q.Kind.GroupVersion().WithKind(q.Kind.Kind + "List"))
	sel := q.Selector
	if sel == nil {
		sel = labels.Everything()
	}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}
	if q.Namespace != "" {
		opts = append(opts, client.InNamespace(q.Namespace))
	}
	if err := p.Reader.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	out := make([]runtime.Object, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}
