// Package objectmeta checks the metadata of built-in objects as
// kube-apiserver 1.37 does when it creates them. It is the implementation
// behind typecheck.ValidateBuiltinMetadata, kept internal so that the
// policy package's Tester can use it too.
package objectmeta

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/internal/builtin"
)

// nameRule is how kube-apiserver 1.37 checks the metadata of one built-in
// kind on create: the name function its validation passes to
// ValidateObjectMeta, and whether that validation is the core API's
// wrapper, which also refuses a finalizer name without a slash that is
// not one of the standard ones.
type nameRule struct {
	name       apivalidation.ValidateNameFunc
	finalizers bool
	// resetsGeneration is true for the kinds whose create strategy sets
	// metadata.generation to 1 before validation.
	resetsGeneration bool
	// maxName, when not zero, is a longer limit the kind's validation
	// sets on the name after the rest (CronJob's 52 characters: its
	// controller appends an 11-character suffix to name Jobs).
	maxName int
}

// builtinNameRules holds the kinds whose metadata
// [Validate] checks, by group and kind (every served version
// of the kind shares the rule). Read from k8s.io/kubernetes v1.37.2
// pkg/apis/*/validation and pkg/registry, and verified by the conformance
// module's metadatadiff.TestBuiltinMetadata against the kinds' create
// strategies.
var builtinNameRules = map[schema.GroupKind]nameRule{
	{Kind: "Pod"}:                   {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Kind: "Service"}:               {apivalidation.NameIsDNSLabel, true, false, 0}, // RelaxedServiceNameValidation is GA in 1.37
	{Kind: "Namespace"}:             {apivalidation.NameIsDNSLabel, true, false, 0},
	{Kind: "ConfigMap"}:             {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "Secret"}:                {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "ServiceAccount"}:        {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "PersistentVolumeClaim"}: {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "PersistentVolume"}:      {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "LimitRange"}:            {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "ResourceQuota"}:         {apivalidation.NameIsDNSSubdomain, true, false, 0},

	{Group: "apps", Kind: "Deployment"}:         {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "apps", Kind: "ReplicaSet"}:         {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "apps", Kind: "DaemonSet"}:          {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "apps", Kind: "StatefulSet"}:        {apivalidation.NameIsDNSLabel, true, true, 0},
	{Group: "apps", Kind: "ControllerRevision"}: {apivalidation.NameIsDNSSubdomain, true, false, 0},

	{Group: "batch", Kind: "Job"}:     {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "batch", Kind: "CronJob"}: {apivalidation.NameIsDNSSubdomain, true, true, 52},

	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               {pathSegmentName, true, false, 0},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        {pathSegmentName, true, false, 0},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        {pathSegmentName, true, false, 0},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: {pathSegmentName, true, false, 0},

	{Group: "networking.k8s.io", Kind: "Ingress"}:       {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "networking.k8s.io", Kind: "IngressClass"}:  {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: {apivalidation.NameIsDNSSubdomain, true, true, 0},

	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:     {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "storage.k8s.io", Kind: "StorageClass"}:         {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:      {apivalidation.NameIsDNSSubdomain, true, true, 0},
	{Group: "coordination.k8s.io", Kind: "Lease"}:           {apivalidation.NameIsDNSSubdomain, false, false, 0},
	{Kind: "Node"}:        {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "Endpoints"}:   {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Kind: "PodTemplate"}: {apivalidation.NameIsDNSSubdomain, true, true, 0},

	{Group: "node.k8s.io", Kind: "RuntimeClass"}:        {apivalidation.NameIsDNSSubdomain, false, false, 0},
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:        {apivalidation.NameIsDNSSubdomain, true, false, 0},
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}: {apivalidation.NameIsDNSSubdomain, true, false, 0},

	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: {apivalidation.NameIsDNSSubdomain, false, true, 0},
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   {apivalidation.NameIsDNSSubdomain, false, true, 0},

	// PodDisruptionBudget's validation leaves metadata to the generic
	// check of every create, whose name rule is a path segment.
	{Group: "policy", Kind: "PodDisruptionBudget"}: {pathSegmentName, false, true, 0},
}

// pathSegmentName is the RBAC kinds' name rule: any name that can be a
// path segment of a URL.
func pathSegmentName(name string, _ bool) []string { return content.IsPathSegmentName(name) }

// builtinScopes maps every built-in group and kind to whether it is
// namespaced.
var builtinScopes = sync.OnceValue(func() map[schema.GroupKind]bool {
	m := map[schema.GroupKind]bool{}
	for _, r := range builtin.Resources() {
		m[schema.GroupKind{Group: r.Group, Kind: r.Kind}] = r.Namespaced
	}
	return m
})

// standardFinalizers are the finalizer names without a slash the core
// API's validation accepts.
var standardFinalizers = []string{"kubernetes", metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}

// Known reports whether [Validate] checks the metadata of objects of gk.
func Known(gk schema.GroupKind) bool {
	_, ok := builtinNameRules[gk]
	return ok
}

// Namespaced reports whether gk is a namespaced built-in kind.
func Namespaced(gk schema.GroupKind) bool {
	return builtinScopes()[gk]
}

// Validate returns the errors kube-apiserver 1.37 reports for the metadata
// of obj, a built-in object, when it is created; nil when it is valid or
// its kind is not [Known]. typecheck.ValidateBuiltinMetadata documents
// what is checked. obj is not modified.
func Validate(obj *unstructured.Unstructured) field.ErrorList {
	if obj == nil {
		return nil
	}
	gk := obj.GroupVersionKind().GroupKind()
	rule, ok := builtinNameRules[gk]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata")
	namespaced := builtinScopes()[gk]
	meta, errs := Prepared(obj, namespaced)
	if errs != nil {
		return errs
	}
	if rule.resetsGeneration {
		meta.Generation = 1
	}
	if gk == (schema.GroupKind{Kind: "Namespace"}) {
		// The server labels every namespace with its name.
		labels := make(map[string]string, len(meta.Labels)+1)
		for k, v := range meta.Labels {
			labels[k] = v
		}
		labels["kubernetes.io/metadata.name"] = meta.Name
		meta.Labels = labels
	}
	errs = apivalidation.ValidateObjectMeta(meta, namespaced, rule.name, path)
	if rule.finalizers {
		for i, f := range meta.Finalizers {
			if !strings.Contains(f, "/") && !slices.Contains(standardFinalizers, f) {
				errs = append(errs, field.Invalid(path.Child("finalizers").Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
			}
		}
	}
	if rule.maxName > 0 && len(meta.Name) > rule.maxName {
		errs = append(errs, field.Invalid(path.Child("name"), meta.Name, fmt.Sprintf("must be no more than %d characters", rule.maxName)))
	}
	return dedupe(sameFieldSorted(errs))
}

// dedupe drops the errors equal to the one before them: the server
// reports a repeated problem (a finalizer given twice, say) once.
func dedupe(errs field.ErrorList) field.ErrorList {
	out := errs[:0]
	for i, e := range errs {
		if i > 0 && e.Error() == errs[i-1].Error() {
			continue
		}
		out = append(out, e)
	}
	return out
}

// sameFieldSorted sorts the runs of errs on one field by their text: the
// server reports labels, annotations and their problems in map order,
// which varies from one request to the next.
func sameFieldSorted(errs field.ErrorList) field.ErrorList {
	for i := 0; i < len(errs); {
		j := i + 1
		for j < len(errs) && errs[j].Field == errs[i].Field {
			j++
		}
		slices.SortStableFunc(errs[i:j], func(a, b *field.Error) int { return strings.Compare(a.Error(), b.Error()) })
		i = j
	}
	return errs
}

// clusterScoped returns obj, or a copy without metadata.namespace when
// obj is not namespaced: the server drops the namespace of a
// cluster-scoped object before validating it.
func clusterScoped(obj *unstructured.Unstructured, namespaced bool) *unstructured.Unstructured {
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "namespace"); !found || namespaced {
		return obj
	}
	obj = obj.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "metadata", "namespace")
	return obj
}

// objectMeta decodes obj's metadata; the errors say why it cannot be.
func objectMeta(obj *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	raw := obj.UnstructuredContent()["metadata"]
	meta := &metav1.ObjectMeta{}
	if raw == nil {
		return meta, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}

// generateName gives meta a name from its generateName when it has none,
// as the server does before validation: the prefix cut to 58 characters
// and a five-character suffix every name rule accepts.
func generateName(meta *metav1.ObjectMeta) {
	if meta.Name != "" || meta.GenerateName == "" {
		return
	}
	base := meta.GenerateName
	if len(base) > 58 {
		base = base[:58]
	}
	meta.Name = base + "xxxxx"
}

// Prepared returns obj's metadata as the server validates it on create:
// without a namespace when the kind is cluster-scoped, and with a name
// generated from generateName when it has none. The errors say why the
// metadata cannot be decoded. obj is not modified.
func Prepared(obj *unstructured.Unstructured, namespaced bool) (*metav1.ObjectMeta, field.ErrorList) {
	meta, errs := objectMeta(clusterScoped(obj, namespaced))
	if errs != nil {
		return nil, errs
	}
	generateName(meta)
	return meta, nil
}
