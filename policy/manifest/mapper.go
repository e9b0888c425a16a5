package manifest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
)

// ResourceMapper maps between kinds and resources as a kube-apiserver 1.37
// with default flags does, for its built-in resources and the kinds of a
// fixed set of CustomResourceDefinitions. It is the one mapper of vapkit:
// the evaluator uses it to find the resource of a kind and the resources
// that share storage (it satisfies
// [github.com/vapkit/vapkit/policy.ResourceMapper]), and the type checker
// uses it to find the kinds a policy's resource rules name (it satisfies
// [github.com/vapkit/vapkit/typecheck.KindMapper]).
//
// A ResourceMapper is immutable and safe for concurrent use; its answers
// never change. Build it with [NewResourceMapper]; the zero value is not
// usable.
type ResourceMapper struct {
	m *builtin.Mapper
}

var _ runtime.EquivalentResourceMapper = (*ResourceMapper)(nil)

// NewResourceMapper returns the mapper of every built-in kind of
// Kubernetes 1.37, with its resource, scope and subresources, plus the
// kinds of crds (apiextensions.k8s.io/v1 CustomResourceDefinitions, as
// [Load] returns them in Set.CRDs), whose served versions are equivalent
// resources. It fails on a nil or malformed CRD, and on a CRD that defines
// a built-in kind or resource or one another CRD defines, naming the CRD's
// index in crds.
func NewResourceMapper(crds ...*unstructured.Unstructured) (*ResourceMapper, error) {
	list := make([]builtin.CRD, 0, len(crds))
	for i, u := range crds {
		if u == nil {
			return nil, fmt.Errorf("crds[%d]: must not be nil", i)
		}
		crd, err := builtin.CRDFromUnstructured(u)
		if err != nil {
			return nil, fmt.Errorf("crds[%d] (%s): %w", i, u.GetName(), err)
		}
		list = append(list, crd)
	}
	m, err := builtin.NewMapper(list...)
	if err != nil {
		return nil, err
	}
	return &ResourceMapper{m: m}, nil
}

// ResourceFor returns the resource serving kind and whether it is
// namespaced. Built-in kinds are known in every group version k8s.io/api
// defines, custom kinds in their CRD's served versions; another kind is an
// error reading like the API server's "no matches for kind".
func (r *ResourceMapper) ResourceFor(kind schema.GroupVersionKind) (resource schema.GroupVersionResource, namespaced bool, err error) {
	return r.m.ResourceFor(kind)
}

// KindFor returns the kind that requests to a resource or subresource
// carry (autoscaling/v1 Scale for most scale subresources, the parent's
// kind for status, and so on), or the zero kind when the resource or
// subresource is unknown. It implements runtime.EquivalentResourceMapper.
func (r *ResourceMapper) KindFor(resource schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	return r.m.KindFor(resource, subresource)
}

// EquivalentResourcesFor returns the resources that share storage with
// resource, itself included, that have the subresource, or nil when either
// is unknown: every served version of a CRD, in spec order; for a built-in
// resource the versions of it served by default (core v1 events and
// events.k8s.io/v1 events count as one). This is what matchPolicy
// Equivalent matches against. It implements
// runtime.EquivalentResourceMapper; the slice belongs to the caller.
func (r *ResourceMapper) EquivalentResourcesFor(resource schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	return r.m.EquivalentResourcesFor(resource, subresource)
}

// KindsFor lists the kinds a resource may name, as the API server's
// discovery RESTMapper answers when the type checker asks it: an empty
// group or version in resource matches any, the resource may be plural or
// singular in any case, and only the versions served by default (GA
// built-in versions, served CRD versions) are known. Several kinds come
// back sorted by group, version and kind; an unknown resource is an error.
func (r *ResourceMapper) KindsFor(resource schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return r.m.KindsFor(resource)
}
