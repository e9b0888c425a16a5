//go:build vapkit_harness

package upstream

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Ordering fixes the order in which the plugin visits policies, the
// bindings of each policy, and the parameters a selector lists. Names not
// listed come after the listed ones, in document order. The zero Ordering is
// the document order.
type Ordering struct {
	// Policies are policy names.
	Policies []string
	// Bindings are binding names; only the relative order of bindings of the
	// same policy matters.
	Bindings []string
	// Params are ParamKey values; only the relative order of parameters of
	// one kind in one namespace matters.
	Params []string
}

// ParamKey identifies a parameter object in an Ordering: "Kind.group" (or
// "Kind" for the core group), a slash, the namespace (empty for
// cluster-scoped kinds), a slash and the name.
func ParamKey(gk schema.GroupKind, namespace, name string) string {
	return gk.String() + "/" + namespace + "/" + name
}

// ranks maps names to sort positions; missing names sort after present ones
// by their fallback position, then by name.
type ranks struct {
	policies, bindings, params map[string]int
	fallback                   *ranks
}

func indexOf(names []string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		if _, dup := m[n]; !dup {
			m[n] = i
		}
	}
	return m
}

func newRanks(o Ordering, doc ranks) ranks {
	return ranks{policies: indexOf(o.Policies), bindings: indexOf(o.Bindings), params: indexOf(o.Params), fallback: &doc}
}

func documentRanks(c *Case) ranks {
	r := ranks{policies: map[string]int{}, bindings: map[string]int{}, params: map[string]int{}}
	for i, p := range c.Policies {
		r.policies[p.Name] = i
	}
	for i, b := range c.Bindings {
		r.bindings[b.Name] = i
	}
	for i, p := range c.Params {
		if key, ok := paramKeyOf(p, p.GetObjectKind().GroupVersionKind().GroupKind()); ok {
			r.params[key] = i
		}
	}
	return r
}

func paramKeyOf(obj runtime.Object, gk schema.GroupKind) (string, bool) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return "", false
	}
	return ParamKey(gk, accessor.GetNamespace(), accessor.GetName()), true
}

type rankKey struct {
	tier, pos int
	name      string
}

func lookup(primary, fallback map[string]int, name string) rankKey {
	if i, ok := primary[name]; ok {
		return rankKey{0, i, name}
	}
	if i, ok := fallback[name]; ok {
		return rankKey{1, i, name}
	}
	return rankKey{2, 0, name}
}

func compareRank(a, b rankKey) int {
	return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.pos, b.pos), cmp.Compare(a.name, b.name))
}

func (r ranks) of(kind int, name string) rankKey {
	var fb ranks
	if r.fallback != nil {
		fb = *r.fallback
	}
	switch kind {
	case 0:
		return lookup(r.policies, fb.policies, name)
	case 1:
		return lookup(r.bindings, fb.bindings, name)
	default:
		return lookup(r.params, fb.params, name)
	}
}

// orderedSource wraps the plugin's real policy source and returns its hooks
// sorted by the current ranks, with sorted bindings and sorting parameter
// listers. Everything else in a hook is the real source's.
type orderedSource struct {
	inner generic.Source[validating.PolicyHook]
	mu    sync.Mutex
	ranks ranks
}

var _ generic.Source[validating.PolicyHook] = (*orderedSource)(nil)

func (s *orderedSource) setRanks(r ranks) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ranks = r
}

// Run runs the wrapped source.
func (s *orderedSource) Run(ctx context.Context) error { return s.inner.Run(ctx) }

// HasSynced reports whether the wrapped source has synced.
func (s *orderedSource) HasSynced() bool { return s.inner.HasSynced() }

// Hooks returns the wrapped source's hooks in the current order.
func (s *orderedSource) Hooks() []validating.PolicyHook {
	hooks := s.inner.Hooks()
	if hooks == nil {
		return nil
	}
	s.mu.Lock()
	r := s.ranks
	s.mu.Unlock()
	out := slices.Clone(hooks)
	for i := range out {
		h := &out[i]
		h.Bindings = slices.Clone(h.Bindings)
		slices.SortStableFunc(h.Bindings, func(a, b *validating.PolicyBinding) int {
			return compareRank(r.of(1, a.Name), r.of(1, b.Name))
		})
		if h.ParamInformer != nil && h.Policy.Spec.ParamKind != nil {
			if gv, err := schema.ParseGroupVersion(h.Policy.Spec.ParamKind.APIVersion); err == nil {
				h.ParamInformer = &orderedInformer{inner: h.ParamInformer, gk: gv.WithKind(h.Policy.Spec.ParamKind.Kind).GroupKind(), ranks: r}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b validating.PolicyHook) int {
		return compareRank(r.of(0, a.Policy.Name), r.of(0, b.Policy.Name))
	})
	return out
}

// orderedInformer wraps a parameter informer so that its lister lists in
// rank order.
type orderedInformer struct {
	inner informers.GenericInformer
	gk    schema.GroupKind
	ranks ranks
}

func (i *orderedInformer) Informer() cache.SharedIndexInformer { return i.inner.Informer() }

func (i *orderedInformer) Lister() cache.GenericLister {
	return &orderedLister{inner: i.inner.Lister(), sorter: i}
}

func (i *orderedInformer) sort(objs []runtime.Object) {
	key := func(o runtime.Object) rankKey {
		k, _ := paramKeyOf(o, i.gk)
		return i.ranks.of(2, k)
	}
	slices.SortStableFunc(objs, func(a, b runtime.Object) int { return compareRank(key(a), key(b)) })
}

type orderedLister struct {
	inner  cache.GenericLister
	sorter *orderedInformer
}

func (l *orderedLister) List(selector labels.Selector) ([]runtime.Object, error) {
	objs, err := l.inner.List(selector)
	l.sorter.sort(objs)
	return objs, err
}

func (l *orderedLister) Get(name string) (runtime.Object, error) { return l.inner.Get(name) }

func (l *orderedLister) ByNamespace(namespace string) cache.GenericNamespaceLister {
	return &orderedNamespaceLister{inner: l.inner.ByNamespace(namespace), sorter: l.sorter}
}

type orderedNamespaceLister struct {
	inner  cache.GenericNamespaceLister
	sorter *orderedInformer
}

func (l *orderedNamespaceLister) List(selector labels.Selector) ([]runtime.Object, error) {
	objs, err := l.inner.List(selector)
	l.sorter.sort(objs)
	return objs, err
}

func (l *orderedNamespaceLister) Get(name string) (runtime.Object, error) { return l.inner.Get(name) }
