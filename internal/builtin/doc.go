// Package builtin knows the built-in kinds of Kubernetes 1.37
// (k8s.io/api v0.37.2) the way a kube-apiserver knows them: their Go types
// ([Scheme]), how a built-in object looks to CEL after the API server has
// held it as a typed struct ([ToUnstructured], [DecodeJSON]), and which
// resource, scope and subresources each kind has ([Resources], [Mapper]).
//
// For example, a Deployment written without status and with an unknown
// field reaches a ValidatingAdmissionPolicy as the k8s.io/api struct
// serializes it: ToUnstructured returns it with "status": {} and without the
// unknown field, while an object of a custom kind comes back as written.
//
// A [Mapper] adds CRDs ([CRD], read from CustomResourceDefinition objects
// with [CRDFromUnstructured]) to the built-in table and answers the
// questions the admission matcher asks: the resource of a kind, the kind of
// a resource or subresource, the equivalent resources of matchPolicy
// Equivalent, and the scope of a resource.
//
// # Generated table
//
// zz_generated_resources.go is written by `go generate` from the k8s.io/api
// source in the module cache (see internal/gen): types with a +genclient
// marker are resources, +genclient:nonNamespaced marks cluster scope, and
// subresources come from markers and status fields plus a short hand-kept
// list (pods/exec, nodes/proxy, ...). Regenerate it when k8s.io/api moves.
//
// # Concurrency
//
// Everything here is immutable after construction and safe for concurrent
// use. [Scheme] is shared and must not be modified.
//
// # Compatibility
//
// Object conversion follows apiserver's pkg/cel/common SchemalessTypedToVal
// (equivalent to runtime.DefaultUnstructuredConverter.ToUnstructured) and
// the non-strict JSON decoding of request bodies. Equivalent resources
// follow apimachinery's equivalentResourceRegistry as a kube-apiserver 1.37
// fills it with default flags; see [Mapper.EquivalentResourcesFor].
package builtin
