package typecheck

import (
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KindMapper lists the kinds a resource may name, like a RESTMapper of the
// API server's discovery information. An empty group or version in gvr
// matches any, and the resource may be plural or singular in any case.
// [manifest.ResourceMapper] implements it for the resources a kube-apiserver
// 1.37 serves by default and a set of CRDs; apimachinery's meta.RESTMapper
// implements it too.
type KindMapper interface {
	KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error)
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
