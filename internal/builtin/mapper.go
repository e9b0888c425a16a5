package builtin

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ErrUnknownKind is wrapped by the errors [Mapper.ResourceFor] returns for a
// kind that is neither built in nor defined by one of the mapper's CRDs.
var ErrUnknownKind = errors.New("unknown kind")

// unknownKindError reads like apimachinery's meta.NoKindMatchError, which
// a RESTMapper returns in the API server, and matches [ErrUnknownKind].
type unknownKindError struct{ gvk schema.GroupVersionKind }

func (e *unknownKindError) Error() string {
	return fmt.Sprintf("no matches for kind %q in version %q", e.gvk.Kind, e.gvk.GroupVersion().String())
}

func (e *unknownKindError) Is(target error) bool { return target == ErrUnknownKind }

// CRD is what the mapper needs to know about one
// apiextensions.k8s.io/v1 CustomResourceDefinition.
type CRD struct {
	// Group is spec.group.
	Group string
	// Kind is spec.names.kind.
	Kind string
	// Plural is spec.names.plural.
	Plural string
	// Singular is spec.names.singular, or the lower-case kind when that is
	// empty (as the API server defaults it).
	Singular string
	// Namespaced is true for spec.scope Namespaced, false for Cluster.
	Namespaced bool
	// Versions are the names of the served versions, in spec order.
	Versions []string
	// StatusVersions are the served versions that declare the status
	// subresource; requests to it carry the CRD's own kind.
	StatusVersions []string
	// ScaleVersions are the served versions that declare the scale
	// subresource; requests to it carry autoscaling/v1 Scale.
	ScaleVersions []string
}

// CRDFromUnstructured reads a CRD from an apiextensions.k8s.io/v1
// CustomResourceDefinition object. Schemas and conversion settings are not
// read. Missing or malformed required fields are reported together, each
// with its field path.
func CRDFromUnstructured(u *unstructured.Unstructured) (CRD, error) {
	if u == nil {
		return CRD{}, errors.New("CustomResourceDefinition is nil")
	}
	gvk := u.GroupVersionKind()
	want := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	if gvk != want {
		return CRD{}, fmt.Errorf("expected %s, got %s", want, gvk)
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	str := func(p *field.Path, fields ...string) string {
		v, found, err := unstructured.NestedString(u.Object, fields...)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p, nested(u.Object, fields...), "must be a string"))
		case !found || v == "":
			errs = append(errs, field.Required(p, ""))
		}
		return v
	}
	var crd CRD
	crd.Group = str(spec.Child("group"), "spec", "group")
	crd.Kind = str(spec.Child("names", "kind"), "spec", "names", "kind")
	crd.Plural = str(spec.Child("names", "plural"), "spec", "names", "plural")
	if crd.Singular, _, _ = unstructured.NestedString(u.Object, "spec", "names", "singular"); crd.Singular == "" {
		crd.Singular = strings.ToLower(crd.Kind)
	}
	switch scope := str(spec.Child("scope"), "spec", "scope"); scope {
	case "Namespaced":
		crd.Namespaced = true
	case "Cluster", "":
	default:
		errs = append(errs, field.NotSupported(spec.Child("scope"), scope, []string{"Cluster", "Namespaced"}))
	}
	versionsPath := spec.Child("versions")
	versions, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "versions")
	list, isList := versions.([]any)
	switch {
	case err != nil || (found && !isList):
		errs = append(errs, field.Invalid(versionsPath, versions, "must be a list"))
	case len(list) == 0:
		errs = append(errs, field.Required(versionsPath, "must have at least one version"))
	}
	for i, item := range list {
		p := versionsPath.Index(i)
		v, ok := item.(map[string]any)
		if !ok {
			errs = append(errs, field.Invalid(p, item, "must be an object"))
			continue
		}
		name, ok := v["name"].(string)
		if !ok || name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
			continue
		}
		served, ok := v["served"].(bool)
		if _, present := v["served"]; present && !ok {
			errs = append(errs, field.Invalid(p.Child("served"), v["served"], "must be a boolean"))
			continue
		}
		if !served {
			continue
		}
		crd.Versions = append(crd.Versions, name)
		sub, _ := v["subresources"].(map[string]any)
		if _, ok := sub["status"].(map[string]any); ok {
			crd.StatusVersions = append(crd.StatusVersions, name)
		}
		if _, ok := sub["scale"].(map[string]any); ok {
			crd.ScaleVersions = append(crd.ScaleVersions, name)
		}
	}
	if len(errs) > 0 {
		return CRD{}, fmt.Errorf("CustomResourceDefinition %q: %w", u.GetName(), errs.ToAggregate())
	}
	return crd, nil
}

func nested(obj map[string]any, fields ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	return v
}

// sharedIndex is the built-in index, built on first use.
var sharedIndex = sync.OnceValue(newBuiltinIndex)

// Mapper maps between kinds and resources for built-in resources and a fixed
// set of CRDs, and knows which resources are equivalent for matchPolicy
// Equivalent. It is immutable and safe for concurrent use. The zero value is
// not usable; call [NewMapper].
type Mapper struct {
	builtin *builtinIndex
	crds    []*CRD // in the order given to NewMapper
	crdGVK  map[schema.GroupVersionKind]schema.GroupVersionResource
	crdGVR  map[schema.GroupVersionResource]*CRD
	crdGR   map[schema.GroupResource]*CRD
	// discovery is the RESTMapper behind KindsFor, built on first use.
	discovery func() *meta.DefaultRESTMapper
}

var _ runtime.EquivalentResourceMapper = (*Mapper)(nil)

// NewMapper returns a mapper for the built-in resources and crds. It fails
// when a CRD lacks a group, kind, plural or version, repeats a version, or
// defines a group/kind or group/resource that a built-in resource or another
// CRD already defines. The CRDs are copied.
func NewMapper(crds ...CRD) (*Mapper, error) {
	m := &Mapper{
		builtin: sharedIndex(),
		crdGVK:  map[schema.GroupVersionKind]schema.GroupVersionResource{},
		crdGVR:  map[schema.GroupVersionResource]*CRD{},
		crdGR:   map[schema.GroupResource]*CRD{},
	}
	builtinGK := map[schema.GroupKind]bool{}
	for gvk := range m.builtin.byGVK {
		builtinGK[gvk.GroupKind()] = true
	}
	crdGK := map[schema.GroupKind]bool{}
	for i := range crds {
		c := crds[i]
		c.Versions = slices.Clone(c.Versions)
		c.StatusVersions = slices.Clone(c.StatusVersions)
		c.ScaleVersions = slices.Clone(c.ScaleVersions)
		if c.Group == "" || c.Kind == "" || c.Plural == "" {
			return nil, fmt.Errorf("CRD #%d: group, kind and plural are required (got group %q, kind %q, plural %q)", i, c.Group, c.Kind, c.Plural)
		}
		gr := schema.GroupResource{Group: c.Group, Resource: c.Plural}
		gk := schema.GroupKind{Group: c.Group, Kind: c.Kind}
		if _, ok := m.builtin.scope[gr]; ok {
			return nil, fmt.Errorf("CRD %s: resource is built in", gr)
		}
		if builtinGK[gk] {
			return nil, fmt.Errorf("CRD %s: kind %s is built in", gr, gk)
		}
		if _, ok := m.crdGR[gr]; ok {
			return nil, fmt.Errorf("CRD %s: defined twice", gr)
		}
		if crdGK[gk] {
			return nil, fmt.Errorf("CRD %s: kind %s is defined by another CRD", gr, gk)
		}
		crdGK[gk] = true
		m.crdGR[gr] = &c
		m.crds = append(m.crds, &c)
		for _, v := range c.Versions {
			if v == "" {
				return nil, fmt.Errorf("CRD %s: empty version name", gr)
			}
			gvr := gr.WithVersion(v)
			if _, dup := m.crdGVR[gvr]; dup {
				return nil, fmt.Errorf("CRD %s: version %s listed twice", gr, v)
			}
			m.crdGVR[gvr] = &c
			m.crdGVK[gk.WithVersion(v)] = gvr
		}
	}
	m.discovery = sync.OnceValue(m.newDiscovery)
	return m, nil
}

// KindsFor lists the kinds a resource may name, as the API server's
// discovery RESTMapper answers: gvr's group or version may be empty to
// match any, its resource may be plural or singular in any case, and only
// the versions a kube-apiserver 1.37 serves by default (GA built-in
// versions, served CRD versions) are known. Several kinds come back sorted
// by group, version and kind; an unknown resource is an error. The slice
// belongs to the caller.
func (m *Mapper) KindsFor(gvr schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	kinds, err := m.discovery().KindsFor(gvr)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Version, b.Version), strings.Compare(a.Kind, b.Kind))
	})
	return kinds, nil
}

// newDiscovery builds the RESTMapper behind KindsFor: the built-in
// resources served by default, each under its plural and its lower-case
// kind, then the served versions of the CRDs in order.
func (m *Mapper) newDiscovery() *meta.DefaultRESTMapper {
	d := meta.NewDefaultRESTMapper(nil)
	scope := func(namespaced bool) meta.RESTScope {
		if namespaced {
			return meta.RESTScopeNamespace
		}
		return meta.RESTScopeRoot
	}
	for _, r := range Resources() {
		if !servedByDefault(r.Version) {
			continue
		}
		gvk := r.GroupVersionKind()
		d.AddSpecific(gvk, r.GroupVersionResource(), gvk.GroupVersion().WithResource(strings.ToLower(r.Kind)), scope(r.Namespaced))
	}
	for _, c := range m.crds {
		singular := c.Singular
		if singular == "" {
			singular = strings.ToLower(c.Kind)
		}
		for _, v := range c.Versions {
			gv := schema.GroupVersion{Group: c.Group, Version: v}
			d.AddSpecific(gv.WithKind(c.Kind), gv.WithResource(c.Plural), gv.WithResource(singular), scope(c.Namespaced))
		}
	}
	return d
}

// ResourceFor returns the resource and scope of a kind. Built-in kinds are
// known in every group version k8s.io/api defines; custom kinds only in
// their served versions. An unknown kind yields an error wrapping
// [ErrUnknownKind].
func (m *Mapper) ResourceFor(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced bool, err error) {
	if r, ok := m.builtin.byGVK[gvk]; ok {
		return r.GroupVersionResource(), r.Namespaced, nil
	}
	if gvr, ok := m.crdGVK[gvk]; ok {
		return gvr, m.crdGVR[gvr].Namespaced, nil
	}
	return schema.GroupVersionResource{}, false, &unknownKindError{gvk}
}

// KindFor returns the kind that requests to a resource or subresource
// carry, or the zero kind when the mapper does not know it. It implements
// runtime.EquivalentResourceMapper: built-in subresources carry the kinds
// listed in [Resources]; a CRD's status subresource carries its kind and its
// scale subresource autoscaling/v1 Scale, in the versions that declare them.
func (m *Mapper) KindFor(gvr schema.GroupVersionResource, subresource string) schema.GroupVersionKind {
	if kind, ok := m.builtin.kindFor(gvr, subresource); ok {
		return kind
	}
	c, ok := m.crdGVR[gvr]
	if !ok {
		return schema.GroupVersionKind{}
	}
	switch {
	case subresource == "":
	case subresource == "status" && slices.Contains(c.StatusVersions, gvr.Version):
	case subresource == "scale" && slices.Contains(c.ScaleVersions, gvr.Version):
		return schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	default:
		return schema.GroupVersionKind{}
	}
	return schema.GroupVersionKind{Group: c.Group, Version: gvr.Version, Kind: c.Kind}
}

// EquivalentResourcesFor returns the resources that share storage with gvr,
// gvr itself included, restricted to those that have the subresource; nil
// when gvr or its subresource is unknown. It implements
// runtime.EquivalentResourceMapper with the semantics of a kube-apiserver
// 1.37 with default flags (apimachinery's equivalentResourceRegistry keyed
// by storage prefix):
//
//   - for a CRD, every served version of it, in spec order;
//   - for a built-in resource, every version of the same group and resource
//     served by default (only GA versions are, today: autoscaling v1 and v2
//     horizontalpodautoscalers is the one resource with two), core group
//     first, then by version priority; core v1 events and events.k8s.io/v1
//     events are equivalent because the API server stores them together;
//   - for a built-in version not served by default, only that resource.
//
// The slice belongs to the caller.
func (m *Mapper) EquivalentResourcesFor(gvr schema.GroupVersionResource, subresource string) []schema.GroupVersionResource {
	var candidates []schema.GroupVersionResource
	if _, ok := m.builtin.byGVR[gvr]; ok {
		candidates = m.builtin.equivalents[m.builtin.storage[gvr.GroupResource()]]
		if !slices.Contains(candidates, gvr) {
			candidates = []schema.GroupVersionResource{gvr}
		}
	} else if c, ok := m.crdGVR[gvr]; ok {
		for _, v := range c.Versions {
			candidates = append(candidates, gvr.GroupResource().WithVersion(v))
		}
	}
	var out []schema.GroupVersionResource
	for _, cand := range candidates {
		if !m.KindFor(cand, subresource).Empty() {
			out = append(out, cand)
		}
	}
	return out
}

// Namespaced reports the scope of a resource and whether the mapper knows
// it at all.
func (m *Mapper) Namespaced(gr schema.GroupResource) (namespaced, known bool) {
	if ns, ok := m.builtin.scope[gr]; ok {
		return ns, true
	}
	if c, ok := m.crdGR[gr]; ok {
		return c.Namespaced, true
	}
	return false, false
}
