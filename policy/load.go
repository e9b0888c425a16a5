package policy

import (
	"errors"
	"os"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/manifest"
)

// Manifests are the objects read by [Load], grouped by what they are for.
// Within each group, objects keep their order in the input.
type Manifests struct {
	// Policies and Bindings are in admissionregistration.k8s.io/v1 form,
	// whatever version they were written in, with the defaults the API
	// server stores (failurePolicy Fail, matchPolicy Equivalent, empty
	// selectors, rule scope "*").
	Policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// Namespaces are the v1 Namespace objects.
	Namespaces []*corev1.Namespace
	// CRDs are the apiextensions.k8s.io/v1 CustomResourceDefinitions.
	CRDs []*unstructured.Unstructured
	// Reviews are the admission.k8s.io/v1 AdmissionReviews; their objects
	// stay raw JSON until [RequestFromAdmission] decodes them.
	Reviews []*admissionv1.AdmissionReview
	// Objects are all other objects, such as parameter resources, as
	// *unstructured.Unstructured.
	Objects []runtime.Object
}

var crdKind = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// Load reads multi-document YAML or JSON (a single object, a List, or
// documents separated by "---"). Policies and bindings may be written as
// admissionregistration.k8s.io v1, v1beta1 or v1alpha1; they are converted
// to v1 as the API server converts them. Errors name the file, the line, the
// document number and, where known, the field path, e.g.
//
//	policies.yaml:12: document 2 (ValidatingAdmissionPolicy/p): spec.validations[0].expression: expected string
func Load(data []byte, filename string) (*Manifests, error) {
	docs, err := manifest.Decode(data, filename)
	if err != nil {
		return nil, err
	}
	m := &Manifests{}
	for _, d := range docs {
		switch o := d.Object.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			m.Policies = append(m.Policies, o)
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			m.Bindings = append(m.Bindings, o)
		case *corev1.Namespace:
			m.Namespaces = append(m.Namespaces, o)
		case *admissionv1.AdmissionReview:
			m.Reviews = append(m.Reviews, o)
		case *unstructured.Unstructured:
			if o.GroupVersionKind() == crdKind {
				m.CRDs = append(m.CRDs, o)
			} else {
				m.Objects = append(m.Objects, o)
			}
		default:
			m.Objects = append(m.Objects, d.Object)
		}
	}
	return m, nil
}

// LoadFiles reads each file with [Load] and merges the results in order.
func LoadFiles(paths ...string) (*Manifests, error) {
	if len(paths) == 0 {
		return nil, errors.New("no files given")
	}
	all := &Manifests{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		m, err := Load(data, p)
		if err != nil {
			return nil, err
		}
		all.Policies = append(all.Policies, m.Policies...)
		all.Bindings = append(all.Bindings, m.Bindings...)
		all.Namespaces = append(all.Namespaces, m.Namespaces...)
		all.CRDs = append(all.CRDs, m.CRDs...)
		all.Reviews = append(all.Reviews, m.Reviews...)
		all.Objects = append(all.Objects, m.Objects...)
	}
	return all, nil
}
