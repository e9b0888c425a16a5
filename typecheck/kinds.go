package typecheck

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
)

// KindMapper lists the kinds a resource may name, like a RESTMapper of the
// API server's discovery information. An empty group or version in gvr
// matches any, and the resource may be plural or singular in any case.
// apimachinery's meta.RESTMapper implements it.
type KindMapper interface {
	KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error)
}

// sortedMapper sorts the answers of a DefaultRESTMapper, whose order is
// random, by group, version and kind.
type sortedMapper struct{ m *meta.DefaultRESTMapper }

// KindsFor implements [KindMapper].
func (s sortedMapper) KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	kinds, err := s.m.KindsFor(gvr)
	if err != nil {
		return nil, err
	}
	sortGVKs(kinds)
	return kinds, nil
}

// NewKindMapper returns a [KindMapper] over the resources a kube-apiserver
// 1.37 serves by default (the GA versions of k8s.io/api, plus
// apiextensions.k8s.io/v1 and apiregistration.k8s.io/v1) and the served
// versions of crds (apiextensions.k8s.io/v1 CustomResourceDefinition
// objects). Kinds that match several resources come back sorted by group,
// version and kind.
func NewKindMapper(crds ...*unstructured.Unstructured) (KindMapper, error) {
	m := meta.NewDefaultRESTMapper(nil)
	scope := func(namespaced bool) meta.RESTScope {
		if namespaced {
			return meta.RESTScopeNamespace
		}
		return meta.RESTScopeRoot
	}
	for _, r := range builtin.Resources() {
		if strings.Contains(r.Version, "alpha") || strings.Contains(r.Version, "beta") {
			continue
		}
		gvk := r.GroupVersionKind()
		m.AddSpecific(gvk, r.GroupVersionResource(), gvk.GroupVersion().WithResource(strings.ToLower(r.Kind)), scope(r.Namespaced))
	}
	for _, u := range crds {
		crd, err := builtin.CRDFromUnstructured(u)
		if err != nil {
			return nil, err
		}
		singular, _, _ := unstructured.NestedString(u.Object, "spec", "names", "singular")
		if singular == "" {
			singular = strings.ToLower(crd.Kind)
		}
		for _, v := range crd.Versions {
			gv := schema.GroupVersion{Group: crd.Group, Version: v}
			m.AddSpecific(gv.WithKind(crd.Kind), gv.WithResource(crd.Plural), gv.WithResource(singular), scope(crd.Namespaced))
		}
	}
	return sortedMapper{m}, nil
}

// sortGVKs sorts by group, then version, then kind, comparing plain strings.
func sortGVKs(l []schema.GroupVersionKind) {
	sort.Slice(l, func(i, j int) bool {
		if l[i].Group != l[j].Group {
			return l[i].Group < l[j].Group
		}
		if l[i].Version != l[j].Version {
			return l[i].Version < l[j].Version
		}
		return l[i].Kind < l[j].Kind
	})
}
