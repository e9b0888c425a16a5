package policy

import (
	"errors"
	"fmt"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/policy/manifest"
)

// RequestOptions are the optional parts of a request built by [NewRequest].
// The zero value describes a request by an anonymous user, for the main
// resource, not a dry run, with the options object the API server passes.
type RequestOptions struct {
	// UID identifies the request; it is copied into the response.
	UID string
	// UserInfo is the requesting user.
	UserInfo authenticationv1.UserInfo
	// SubResource is the subresource requested, such as "status" or
	// "scale"; "" for the resource itself.
	SubResource string
	// Resource, when set, is the resource requested, used as given instead
	// of the one the object's kind maps to: needed when the object's kind
	// is not the resource's own, as for a Scale sent to deployments/scale.
	Resource schema.GroupVersionResource
	// DryRun marks a dry-run request.
	DryRun bool
	// Options is the operation's options object; nil means the empty
	// CreateOptions, UpdateOptions or DeleteOptions (meta.k8s.io/v1) the
	// API server passes for CREATE, UPDATE and DELETE, and none for
	// CONNECT.
	Options runtime.Object
	// Resources maps the objects' kinds to resources and scopes. Nil: the
	// built-in kinds of Kubernetes 1.37 ([manifest.NewResourceMapper]
	// without CRDs); set it, for example to [manifest.NewResourceMapper]
	// with your CRDs, for custom resources. [Evaluator.Request] uses the
	// evaluator's mapper.
	Resources ResourceMapper
}

// NewRequest builds the request the API server would send for op on obj
// and oldObj: obj is nil for DELETE and oldObj nil for CREATE; UPDATE has
// both. Objects are typed k8s.io/api structs, with or without apiVersion
// and kind, or *unstructured.Unstructured.
//
// Kind, Resource, Name and Namespace are derived from the object (oldObj
// for DELETE) through opts.Resources: the kind from apiVersion and kind or
// the Go type, the resource and its scope from the mapper, the name and
// namespace from metadata. A namespaced object without a namespace is put
// in "default", as kubectl does; a Namespace's request namespace is its
// own name, as the API server sets it. A kind the mapper does not know is
// an error naming it.
//
// Built-in objects are defaulted as kube-apiserver 1.37 defaults what it
// decodes (a container's imagePullPolicy and terminationMessagePath, a
// Deployment's replicas and strategy, ...), so policies see what they see
// in a cluster; already defaulted objects, such as those read from a
// cluster, stay as they are. An unstructured object of a built-in kind
// is held as its typed k8s.io/api struct, as the API server holds it.
// Custom resources are taken as given.
//
// The objects are not modified: where apiVersion, kind or the namespace
// must be filled in, or defaults applied, the request holds a copy. The request's Namespace
// is looked up through Options.Namespaces when it is evaluated; see
// [Compile].
func NewRequest(op admissionv1.Operation, obj, oldObj runtime.Object, opts RequestOptions) (*Request, error) {
	subject := obj
	if subject == nil {
		subject = oldObj
	}
	if subject == nil {
		return nil, errors.New("request needs an object or an old object")
	}
	mapper := opts.Resources
	if mapper == nil {
		m, err := builtinMapper()
		if err != nil {
			return nil, err
		}
		mapper = m
	}
	gvk, err := kindOf(subject)
	if err != nil {
		return nil, err
	}
	gvr, namespaced, err := resourceOf(mapper, gvk, opts.Resource)
	if err != nil {
		return nil, err
	}
	acc, err := meta.Accessor(subject)
	if err != nil {
		return nil, fmt.Errorf("%v object: %w", gvk, err)
	}
	req := &Request{
		UID:         opts.UID,
		Operation:   op,
		Kind:        gvk,
		Resource:    gvr,
		SubResource: opts.SubResource,
		Name:        acc.GetName(),
		Namespace:   acc.GetNamespace(),
		UserInfo:    opts.UserInfo,
		DryRun:      opts.DryRun,
		Options:     opts.Options,
		Object:      obj,
		OldObject:   oldObj,
	}
	if namespaced && req.Namespace == "" {
		req.Namespace = metav1.NamespaceDefault
	}
	if req.Object, err = normalize(req.Object, gvk, req.Namespace); err != nil {
		return nil, err
	}
	if req.OldObject, err = normalize(req.OldObject, gvk, req.Namespace); err != nil {
		return nil, err
	}
	if req.Object, err = defaulted(req.Object, "object"); err != nil {
		return nil, err
	}
	if req.OldObject, err = defaulted(req.OldObject, "oldObject"); err != nil {
		return nil, err
	}
	if gvk.Group == "" && gvk.Kind == "Namespace" {
		req.Namespace = req.Name
	}
	if req.Options == nil {
		req.Options = defaultOptions(op)
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	return req, nil
}

// Request builds a request as [NewRequest] does, with the evaluator's
// resource mapper (Options.Resources, or the built-in kinds and
// Options.CRDs) unless opts.Resources is set, so that custom resources the
// evaluator knows need no second mapper.
func (e *Evaluator) Request(op admissionv1.Operation, obj, oldObj runtime.Object, opts RequestOptions) (*Request, error) {
	if opts.Resources == nil {
		opts.Resources = e.mapper
	}
	return NewRequest(op, obj, oldObj, opts)
}

// builtinMapper is the mapper of the built-in kinds, built once: it never
// changes after construction.
var builtinMapper = sync.OnceValues(func() (ResourceMapper, error) { return manifest.NewResourceMapper() })

// resourceOf returns the resource of gvk and whether it is namespaced; a
// set override is used as the resource, its scope looked up by its group
// and resource.
func resourceOf(m ResourceMapper, gvk schema.GroupVersionKind, override schema.GroupVersionResource) (schema.GroupVersionResource, bool, error) {
	if override.Resource == "" {
		return m.ResourceFor(gvk) // its error names the kind
	}
	// Any kind served by the same group and resource tells the scope.
	for _, eq := range m.EquivalentResourcesFor(override, "") {
		k := m.KindFor(eq, "")
		if k.Empty() {
			continue
		}
		if _, namespaced, err := m.ResourceFor(k); err == nil {
			return override, namespaced, nil
		}
	}
	return override, false, fmt.Errorf("unknown resource %v", override)
}

// defaultOptions returns the options object the API server passes with op.
func defaultOptions(op admissionv1.Operation) runtime.Object {
	tm := func(kind string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: kind} }
	switch op {
	case admissionv1.Create:
		return &metav1.CreateOptions{TypeMeta: tm("CreateOptions")}
	case admissionv1.Update:
		return &metav1.UpdateOptions{TypeMeta: tm("UpdateOptions")}
	case admissionv1.Delete:
		return &metav1.DeleteOptions{TypeMeta: tm("DeleteOptions")}
	}
	return nil
}

// kindOf returns the kind of obj, from its apiVersion and kind or, for a
// typed object without them, from the k8s.io/api types.
func kindOf(obj runtime.Object) (schema.GroupVersionKind, error) {
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		return gvk, nil
	}
	gvks, _, err := builtin.Scheme().ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionKind{}, fmt.Errorf("cannot tell the kind of %T: set apiVersion and kind", obj)
	}
	return gvks[0], nil
}

// normalize returns obj, or a copy of it with apiVersion and kind set to
// gvk and its namespace set to ns when they are missing; nil stays nil.
func normalize(obj runtime.Object, gvk schema.GroupVersionKind, ns string) (runtime.Object, error) {
	if obj == nil {
		return nil, nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("%v object: %w", gvk, err)
	}
	setNamespace := ns != "" && acc.GetNamespace() == "" && (gvk.Group != "" || gvk.Kind != "Namespace")
	if !setNamespace && !obj.GetObjectKind().GroupVersionKind().Empty() {
		return obj, nil
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	if setNamespace {
		acc, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("%v object: %w", gvk, err)
		}
		acc.SetNamespace(ns)
	}
	return obj, nil
}

// defaulted returns a built-in obj with the API server's defaults applied
// (a copy; see [builtin.Default]); an object of a built-in kind that does
// not decode into its type is an error naming which object it is.
func defaulted(obj runtime.Object, which string) (runtime.Object, error) {
	out, err := builtin.Default(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", which, err)
	}
	return out, nil
}
