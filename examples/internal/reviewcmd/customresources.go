package reviewcmd

import (
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// customResourceRefusals returns what the API server would refuse to
// store among the objects read from docs (parameter objects and others:
// custom resources their CRD's schema refuses, built-in objects whose
// metadata [typecheck.ValidateBuiltinMetadata] refuses), and, with
// request, the object of an AdmissionReview's CREATE or UPDATE request
// (the server validates it after mutating admission, so a caller with
// mutating policies leaves request false): each error as
// "file:line: Kind "name": field: problem", with the line of the field.
func customResourceRefusals(v *typecheck.CustomResourceValidator, file string, docs []manifest.Document, request bool) []string {
	var out []string
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *unstructured.Unstructured, *corev1.Namespace:
			u := asUnstructured(o)
			if u == nil {
				continue
			}
			for _, e := range createErrors(v, u, "") {
				out = append(out, fmt.Sprintf("%s:%d: %s %q: %v", file, d.Locate(e.Field), u.GetKind(), u.GetName(), e))
			}
		case *admissionv1.AdmissionReview:
			req := o.Request
			if !request || req == nil || req.SubResource != "" {
				continue
			}
			obj, old := rawObject(req.Object.Raw), rawObject(req.OldObject.Raw)
			if obj == nil {
				continue
			}
			obj = inNamespace(v, obj, req.Namespace)
			var errs field.ErrorList
			switch req.Operation {
			case admissionv1.Create:
				errs = createErrors(v, obj, req.Namespace)
			case admissionv1.Update:
				errs = v.ValidateUpdate(obj, old)
			}
			for _, e := range errs {
				path := "request.object"
				if e.Field != "" {
					path += "." + e.Field
				}
				out = append(out, fmt.Sprintf("%s:%d: AdmissionReview: request.object: %s %q: %v", file, d.Locate(path), obj.GetKind(), obj.GetName(), e))
			}
		}
	}
	return out
}

// createErrors returns what the API server refuses in obj when it is
// created: for a custom resource, the errors of its CRD's schema; for a
// built-in object, those of its metadata. A namespaced object without a
// namespace is taken to be in ns (see [inNamespace]).
func createErrors(v *typecheck.CustomResourceValidator, obj *unstructured.Unstructured, ns string) field.ErrorList {
	if v.Knows(obj.GroupVersionKind()) {
		return v.Validate(inNamespace(v, obj, ns))
	}
	return typecheck.ValidateBuiltinMetadata(inNamespace(v, obj, ns))
}

// asUnstructured returns o as an unstructured object with its apiVersion
// and kind; nil when it cannot be converted.
func asUnstructured(o k8sruntime.Object) *unstructured.Unstructured {
	if u, ok := o.(*unstructured.Unstructured); ok {
		return u
	}
	m, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(o.GetObjectKind().GroupVersionKind())
	return u
}

// inNamespace returns o, or a copy of o in namespace ns ("default" when
// empty) when o is of a namespaced custom or built-in kind and names no
// namespace: the
// API server takes the namespace from the request's URL (kubectl from its
// context), so files may leave it out.
func inNamespace(v *typecheck.CustomResourceValidator, o *unstructured.Unstructured, ns string) *unstructured.Unstructured {
	if o == nil || o.GetNamespace() != "" || !v.Namespaced(o.GroupVersionKind()) && !typecheck.BuiltinNamespaced(o.GroupVersionKind()) {
		return o
	}
	if ns == "" {
		ns = "default"
	}
	c := o.DeepCopy()
	c.SetNamespace(ns)
	return c
}

// rawObject decodes a request's object as the API server does (whole
// numbers int64); nil when absent or not an object.
func rawObject(raw []byte) *unstructured.Unstructured {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil
	}
	return u
}
