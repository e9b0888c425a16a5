package builtin

//go:generate go run ./internal/gen -o zz_generated_resources.go

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// Resource describes one built-in resource in one group version: its kind,
// plural name, scope and subresources.
type Resource struct {
	// Group is the API group ("" for the core group).
	Group string
	// Version is the API version, for example "v1".
	Version string
	// Kind is the kind of the objects the resource holds.
	Kind string
	// Plural is the resource name used in URLs and admission requests.
	Plural string
	// Namespaced is true for namespace-scoped resources.
	Namespaced bool
	// Subresources lists the subresources, sorted by name.
	Subresources []Subresource
}

// Subresource is one subresource of a [Resource] and the kind a request to it
// carries.
type Subresource struct {
	// Name is the subresource name, for example "status" or "scale".
	Name string
	// Kind is the kind the API server registers for the subresource: the
	// parent's kind for status, autoscaling/v1 Scale for most scale
	// subresources, PodExecOptions for pods/exec, and so on.
	Kind schema.GroupVersionKind
}

// GroupVersionKind returns the kind of the resource's objects.
func (r Resource) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// GroupVersionResource returns the resource's group, version and plural.
func (r Resource) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Plural}
}

// Resources returns the table of built-in resources: every top-level resource
// of k8s.io/api v0.37.2 in every group version the module defines (served by
// default or not), plus the core bindings resource and the two resources the
// kube-apiserver serves from Go types outside k8s.io/api
// (apiextensions.k8s.io/v1 customresourcedefinitions and
// apiregistration.k8s.io/v1 apiservices). The result is sorted by group,
// version and plural, and belongs to the caller.
func Resources() []Resource {
	return generatedResources()
}

// servedByDefault reports whether a kube-apiserver 1.37 serves the version
// without extra flags. Every beta version that was on by default (introduced
// before 1.24) has been removed by 1.37, and newer betas and all alphas are
// off by default, so only GA versions qualify.
func servedByDefault(version string) bool {
	return !strings.Contains(version, "alpha") && !strings.Contains(version, "beta")
}

// builtinIndex is the immutable lookup structure over the built-in table.
type builtinIndex struct {
	byGVK   map[schema.GroupVersionKind]*Resource
	byGVR   map[schema.GroupVersionResource]*Resource
	scope   map[schema.GroupResource]bool
	storage map[schema.GroupResource]string // group resource -> storage key
	// equivalents maps a storage key to the default-served resources that
	// share it, in the order a kube-apiserver registers them.
	equivalents map[string][]schema.GroupVersionResource
}

// cohabiting maps group resources that a kube-apiserver stores together
// with another group's resource to that resource (kube-apiserver's storage
// factory AddCohabitatingResources; the pairs with extensions/v1beta1 are
// moot because extensions is no longer served).
var cohabiting = map[schema.GroupResource]schema.GroupResource{
	{Group: "events.k8s.io", Resource: "events"}: {Resource: "events"},
}

func storageKey(gr schema.GroupResource) string {
	if to, ok := cohabiting[gr]; ok {
		gr = to
	}
	return gr.String()
}

func newBuiltinIndex() *builtinIndex {
	table := generatedResources()
	idx := &builtinIndex{
		byGVK:       make(map[schema.GroupVersionKind]*Resource, len(table)),
		byGVR:       make(map[schema.GroupVersionResource]*Resource, len(table)),
		scope:       map[schema.GroupResource]bool{},
		storage:     map[schema.GroupResource]string{},
		equivalents: map[string][]schema.GroupVersionResource{},
	}
	for i := range table {
		r := &table[i]
		idx.byGVK[r.GroupVersionKind()] = r
		idx.byGVR[r.GroupVersionResource()] = r
		gr := schema.GroupResource{Group: r.Group, Resource: r.Plural}
		idx.scope[gr] = r.Namespaced
		idx.storage[gr] = storageKey(gr)
	}
	// The kube-apiserver installs the core group first, then the named
	// groups, each with its versions in priority order (GA before beta
	// before alpha, newest first).
	var served []schema.GroupVersionResource
	for i := range table {
		if servedByDefault(table[i].Version) {
			served = append(served, table[i].GroupVersionResource())
		}
	}
	slices.SortStableFunc(served, func(a, b schema.GroupVersionResource) int {
		if (a.Group == "") != (b.Group == "") {
			if a.Group == "" {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return compareVersions(a.Version, b.Version)
	})
	for _, gvr := range served {
		key := idx.storage[gvr.GroupResource()]
		idx.equivalents[key] = append(idx.equivalents[key], gvr)
	}
	return idx
}

// kindFor returns the kind registered for a built-in resource or
// subresource.
func (idx *builtinIndex) kindFor(gvr schema.GroupVersionResource, subresource string) (schema.GroupVersionKind, bool) {
	r, ok := idx.byGVR[gvr]
	if !ok {
		return schema.GroupVersionKind{}, false
	}
	if subresource == "" {
		return r.GroupVersionKind(), true
	}
	for _, s := range r.Subresources {
		if s.Name == subresource {
			return s.Kind, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// compareVersions orders versions by Kubernetes priority, highest first
// (v2, v1, v1beta2, v1beta1, v1alpha1, then non-Kubernetes names).
func compareVersions(a, b string) int {
	return -version.CompareKubeAwareVersionStrings(a, b)
}
