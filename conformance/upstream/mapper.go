package upstream

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// clusterScoped lists the cluster-scoped built-in kinds of Kubernetes 1.37
// (group/Kind); every other built-in resource kind is namespaced.
var clusterScoped = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                                                    true,
	{Group: "", Kind: "Node"}:                                                         true,
	{Group: "", Kind: "PersistentVolume"}:                                             true,
	{Group: "", Kind: "ComponentStatus"}:                                              true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "authentication.k8s.io", Kind: "TokenReview"}:                             true,
	{Group: "authentication.k8s.io", Kind: "SelfSubjectReview"}:                       true,
	{Group: "authorization.k8s.io", Kind: "SubjectAccessReview"}:                      true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectAccessReview"}:                  true,
	{Group: "authorization.k8s.io", Kind: "SelfSubjectRulesReview"}:                   true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:               true,
}

// excludedResources are the non-persisted resources kube-apiserver excludes
// from every admission policy (k8s.io/kubernetes
// pkg/kubeapiserver/admission/exclusion).
var excludedResources = []schema.GroupResource{
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
}

func builtinNamespaced(gk schema.GroupKind) bool { return !clusterScoped[gk] }

// isResourceKind filters the client-go scheme's kinds down to those that can
// be stored as resources.
func isResourceKind(gvk schema.GroupVersionKind) bool {
	if gvk.Version == runtime.APIVersionInternal {
		return false
	}
	switch {
	case strings.HasSuffix(gvk.Kind, "List"), strings.HasSuffix(gvk.Kind, "Options"),
		gvk.Kind == "WatchEvent", gvk.Kind == "Status":
		return false
	}
	return true
}

// newRESTMapper returns a REST mapper that knows the built-in kinds of the
// client-go scheme under their usual plural and scope, and the case's CRDs.
func newRESTMapper(crds []CRD) *meta.DefaultRESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for gvk := range clientgoscheme.Scheme.AllKnownTypes() {
		if !isResourceKind(gvk) {
			continue
		}
		scope := meta.RESTScopeNamespace
		if clusterScoped[gvk.GroupKind()] {
			scope = meta.RESTScopeRoot
		}
		m.Add(gvk, scope)
	}
	for _, crd := range crds {
		scope := meta.RESTScopeRoot
		if crd.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		for _, v := range crd.Versions {
			gvk := schema.GroupVersionKind{Group: crd.Group, Version: v, Kind: crd.Kind}
			m.AddSpecific(gvk,
				schema.GroupVersionResource{Group: crd.Group, Version: v, Resource: crd.Plural},
				schema.GroupVersionResource{Group: crd.Group, Version: v, Resource: crd.Singular},
				scope)
		}
	}
	return m
}

// newEquivalentRegistry registers every served version of each CRD (and
// its declared subresources) as equivalent resources, plus the request's
// own resource so that its kind is known.
func newEquivalentRegistry(crds []CRD, resource schema.GroupVersionResource, subresource string, kind schema.GroupVersionKind) runtime.EquivalentResourceRegistry {
	r := runtime.NewEquivalentResourceRegistry()
	for _, crd := range crds {
		for _, v := range crd.Versions {
			gvr := schema.GroupVersionResource{Group: crd.Group, Version: v, Resource: crd.Plural}
			r.RegisterKindFor(gvr, "", schema.GroupVersionKind{Group: crd.Group, Version: v, Kind: crd.Kind})
			for _, sub := range crd.Subresources {
				switch sub {
				case "status":
					r.RegisterKindFor(gvr, sub, schema.GroupVersionKind{Group: crd.Group, Version: v, Kind: crd.Kind})
				case "scale":
					r.RegisterKindFor(gvr, sub, schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"})
				}
			}
		}
	}
	if r.KindFor(resource, subresource).Empty() {
		r.RegisterKindFor(resource, subresource, kind)
	}
	return r
}

// objectInterfaces implements admission.ObjectInterfaces: typed kinds go
// through the client-go scheme, custom kinds are unstructured and convert
// between versions as a CRD with conversion strategy None does (only
// apiVersion changes).
type objectInterfaces struct {
	equivalent runtime.EquivalentResourceMapper
}

var _ admission.ObjectInterfaces = objectInterfaces{}

func (o objectInterfaces) GetObjectCreater() runtime.ObjectCreater { return creater{} }
func (o objectInterfaces) GetObjectTyper() runtime.ObjectTyper     { return clientgoscheme.Scheme }

func (o objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return convertor{} }
func (o objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o.equivalent
}

type creater struct{}

func (creater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	if clientgoscheme.Scheme.Recognizes(gvk) {
		return clientgoscheme.Scheme.New(gvk)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

type convertor struct{}

func (convertor) Convert(in, out, context interface{}) error {
	uin, inOK := in.(*unstructured.Unstructured)
	uout, outOK := out.(*unstructured.Unstructured)
	if inOK && outOK {
		gvk := uout.GroupVersionKind()
		uout.Object = runtime.DeepCopyJSON(uin.Object)
		if !gvk.Empty() {
			uout.SetGroupVersionKind(gvk)
		}
		return nil
	}
	if inOK != outOK {
		return fmt.Errorf("cannot convert between %T and %T", in, out)
	}
	return clientgoscheme.Scheme.Convert(in, out, context)
}

func (convertor) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	if u, ok := in.(*unstructured.Unstructured); ok {
		target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
		if !ok {
			return nil, fmt.Errorf("cannot convert %v to %v", u.GroupVersionKind(), gv)
		}
		out := u.DeepCopy()
		out.SetGroupVersionKind(target)
		return out, nil
	}
	return clientgoscheme.Scheme.ConvertToVersion(in, gv)
}

func (convertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return clientgoscheme.Scheme.ConvertFieldLabel(gvk, label, value)
}

var _ runtime.ObjectConvertor = convertor{}
