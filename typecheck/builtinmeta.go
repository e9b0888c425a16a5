package typecheck

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/internal/builtin/objectmeta"
)

// KnowsBuiltinMetadata reports whether [ValidateBuiltinMetadata] checks
// the metadata of objects of gvk's group and kind.
func KnowsBuiltinMetadata(gvk schema.GroupVersionKind) bool {
	return objectmeta.Known(gvk.GroupKind())
}

// BuiltinNamespaced reports whether gvk's group and kind is a namespaced
// built-in kind.
func BuiltinNamespaced(gvk schema.GroupVersionKind) bool {
	return objectmeta.Namespaced(gvk.GroupKind())
}

// ValidateBuiltinMetadata returns the errors kube-apiserver 1.37 reports
// for the metadata of obj, an object of a built-in kind, when it is
// created: the errors under metadata of the server's create path (the
// kind's strategy: its validation in k8s.io/kubernetes v1.37.2
// pkg/apis/*/validation, the generic metadata check and declarative
// validation), in the server's order (those of one field, which the
// server reports in map order, sorted by their text; a repeated error
// once). It is nil when the metadata is valid or when the kind is not one
// whose rules are known (see [KnowsBuiltinMetadata]). obj is not modified.
//
// Checked, through apimachinery's ValidateObjectMeta:
//
//   - the name, by the kind's rule: a DNS-1123 label for Namespace,
//     Service and StatefulSet, a path segment for the four RBAC kinds and
//     PodDisruptionBudget, a DNS-1123 subdomain for the other known kinds;
//     a missing name with a generateName gets a generated one first (the
//     prefix cut to 58 characters and five characters the rules accept),
//     and the generateName is checked as a prefix by the same rule; a
//     CronJob's name has at most 52 characters; a Namespace's name is
//     also the value of its kubernetes.io/metadata.name label;
//   - the namespace: required and a DNS-1123 label for namespaced kinds
//     (the caller sets the namespace the request gives: kube-apiserver
//     takes it from the URL); on a cluster-scoped kind the server drops
//     it, so it is no error;
//   - generation not negative (for the kinds whose strategy does not
//     set it to 1), labels (keys qualified names, values label values),
//     annotations (keys qualified names, 256 KiB in all), owner
//     references (apiVersion, kind, name, uid, one controller) and
//     finalizers (qualified names; without a slash, one of the standard
//     names, for the kinds whose validation is the core API's), managed
//     fields.
//
// A missing name without a generateName is reported as the validation's
// "name or generateName is required"; for kinds whose declarative
// validation drops that error, the server refuses the object anyway when
// it computes its storage key (400 "Name parameter required.").
//
// Not checked: the kind's spec and status (its own validation beyond
// metadata, including the metadata rules that depend on the spec, such as
// an indexed Job's name, and a Pod's annotations of special meaning),
// metadata rules of kinds not in the table (Event,
// ReplicationController, the admission policies and their bindings, which
// [github.com/vapkit/vapkit/typecheck.ValidatePolicy] checks, the
// certificate, resource and flow-control kinds and others:
// [KnowsBuiltinMetadata] is false for them), metadata
// on update (immutable name, namespace, uid and creation time), and
// whether the namespace exists.
func ValidateBuiltinMetadata(obj *unstructured.Unstructured) field.ErrorList {
	return objectmeta.Validate(obj)
}
