package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Case is one parsed conformance case: a cluster state and one admission
// request. Policies and bindings carry the defaults the API server stores.
type Case struct {
	// Name identifies the case in errors and seeds sampling.
	Name string
	// Policies in document order, defaulted.
	Policies []*admissionregistrationv1.ValidatingAdmissionPolicy
	// Bindings in document order, defaulted.
	Bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// Namespaces in document order.
	Namespaces []*corev1.Namespace
	// Params holds the parameter objects in document order: built-in kinds
	// as typed client-go objects, custom kinds as *unstructured.Unstructured.
	// Objects of a custom kind without a CRD are dropped (they cannot exist).
	Params []runtime.Object
	// CRDs lists the custom resource definitions in document order.
	CRDs []CRD
	// AuthorizerRules are the rules of the case's AuthorizerRules document.
	AuthorizerRules authorizerRules
	// Request is the AdmissionReview request as written.
	Request *admissionv1.AdmissionRequest
	// Object, OldObject and Options are the request's objects decoded as the
	// API server holds them (typed for built-in kinds, unstructured
	// otherwise). Options is defaulted for CREATE, UPDATE and DELETE.
	Object, OldObject, Options runtime.Object
}

// CRD is the part of an apiextensions.k8s.io/v1 CustomResourceDefinition the
// cases use: which kind exists, under which plural, scope and versions.
type CRD struct {
	// Group is spec.group.
	Group string
	// Kind is spec.names.kind.
	Kind string
	// Plural is spec.names.plural.
	Plural string
	// Singular is spec.names.singular, or the lower-cased kind.
	Singular string
	// Namespaced is true for scope Namespaced.
	Namespaced bool
	// Versions lists the served versions in document order.
	Versions []string
	// Subresources lists the subresources ("status", "scale") declared by
	// any served version.
	Subresources []string
}

const (
	crdAPIVersion        = "apiextensions.k8s.io/v1"
	authorizerAPIVersion = "vapkit.dev/v1alpha1"
)

// ParseCase parses a conformance case (multi-document YAML) in the shared
// case format. name is used in error messages.
func ParseCase(data []byte, name string) (*Case, error) {
	c := &Case{Name: name}
	var rawParams [][]byte
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for index := 0; ; index++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("case %s: reading document %d: %w", name, index, err)
		}
		jsonDoc, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("case %s: document %d: %w", name, index, err)
		}
		if trimmed := bytes.TrimSpace(jsonDoc); len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			continue
		}
		var tm metav1.TypeMeta
		if err := json.Unmarshal(jsonDoc, &tm); err != nil {
			return nil, fmt.Errorf("case %s: document %d is not an object: %w", name, index, err)
		}
		if tm.APIVersion == "" || tm.Kind == "" {
			return nil, fmt.Errorf("case %s: document %d has no apiVersion or kind", name, index)
		}
		if err := c.addDocument(tm, jsonDoc, &rawParams); err != nil {
			return nil, fmt.Errorf("case %s: document %d (%s %s): %w", name, index, tm.APIVersion, tm.Kind, err)
		}
	}
	if c.Request == nil {
		return nil, fmt.Errorf("case %s: no admission.k8s.io/v1 AdmissionReview document", name)
	}
	for _, raw := range rawParams {
		obj, err := c.decodeParam(raw)
		if err != nil {
			return nil, fmt.Errorf("case %s: param: %w", name, err)
		}
		if obj != nil {
			c.Params = append(c.Params, obj)
		}
	}
	if err := c.decodeRequestObjects(); err != nil {
		return nil, fmt.Errorf("case %s: %w", name, err)
	}
	return c, nil
}

func (c *Case) addDocument(tm metav1.TypeMeta, doc []byte, rawParams *[][]byte) error {
	switch {
	case tm.APIVersion == "admissionregistration.k8s.io/v1" && tm.Kind == "ValidatingAdmissionPolicy":
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
		if err := yaml.UnmarshalStrict(doc, p); err != nil {
			return err
		}
		defaultPolicy(p)
		c.Policies = append(c.Policies, p)
	case tm.APIVersion == "admissionregistration.k8s.io/v1" && tm.Kind == "ValidatingAdmissionPolicyBinding":
		b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		if err := yaml.UnmarshalStrict(doc, b); err != nil {
			return err
		}
		defaultBinding(b)
		c.Bindings = append(c.Bindings, b)
	case tm.APIVersion == "v1" && tm.Kind == "Namespace":
		ns := &corev1.Namespace{}
		if err := yaml.Unmarshal(doc, ns); err != nil {
			return err
		}
		c.Namespaces = append(c.Namespaces, ns)
	case tm.APIVersion == crdAPIVersion && tm.Kind == "CustomResourceDefinition":
		crd, err := parseCRD(doc)
		if err != nil {
			return err
		}
		c.CRDs = append(c.CRDs, crd)
	case tm.APIVersion == authorizerAPIVersion && tm.Kind == "AuthorizerRules":
		var rules struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        map[string]any  `json:"metadata,omitempty"`
			Rules           authorizerRules `json:"rules"`
		}
		if err := yaml.UnmarshalStrict(doc, &rules); err != nil {
			return err
		}
		if _, err := NewRulesAuthorizer(rules.Rules); err != nil {
			return err
		}
		c.AuthorizerRules = append(c.AuthorizerRules, rules.Rules...)
	case tm.APIVersion == "admission.k8s.io/v1" && tm.Kind == "AdmissionReview":
		if c.Request != nil {
			return errors.New("more than one AdmissionReview")
		}
		review := &admissionv1.AdmissionReview{}
		if err := yaml.Unmarshal(doc, review); err != nil {
			return err
		}
		if review.Request == nil {
			return errors.New("AdmissionReview has no request")
		}
		c.Request = review.Request
	default:
		*rawParams = append(*rawParams, doc)
	}
	return nil
}

func parseCRD(doc []byte) (CRD, error) {
	var raw struct {
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind     string `json:"kind"`
				Plural   string `json:"plural"`
				Singular string `json:"singular"`
			} `json:"names"`
			Scope    string `json:"scope"`
			Versions []struct {
				Name         string         `json:"name"`
				Served       bool           `json:"served"`
				Subresources map[string]any `json:"subresources"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return CRD{}, err
	}
	s := raw.Spec
	crd := CRD{
		Group:    s.Group,
		Kind:     s.Names.Kind,
		Plural:   s.Names.Plural,
		Singular: s.Names.Singular,
	}
	switch s.Scope {
	case "Namespaced":
		crd.Namespaced = true
	case "Cluster":
	default:
		return CRD{}, fmt.Errorf("spec.scope must be Namespaced or Cluster, got %q", s.Scope)
	}
	if crd.Group == "" || crd.Kind == "" || crd.Plural == "" {
		return CRD{}, errors.New("spec.group, spec.names.kind and spec.names.plural are required")
	}
	if crd.Singular == "" {
		crd.Singular = strings.ToLower(crd.Kind)
	}
	seen := map[string]bool{}
	for _, v := range s.Versions {
		if !v.Served {
			continue
		}
		crd.Versions = append(crd.Versions, v.Name)
		for _, sub := range []string{"status", "scale"} {
			if _, ok := v.Subresources[sub]; ok && !seen[sub] {
				seen[sub] = true
				crd.Subresources = append(crd.Subresources, sub)
			}
		}
	}
	if len(crd.Versions) == 0 {
		return CRD{}, errors.New("no served version")
	}
	return crd, nil
}

// crdFor returns the CRD that defines gk, if any.
func (c *Case) crdFor(gk schema.GroupKind) (CRD, bool) {
	for _, crd := range c.CRDs {
		if crd.Group == gk.Group && crd.Kind == gk.Kind {
			return crd, true
		}
	}
	return CRD{}, false
}

// decodeParam decodes a parameter object. Built-in kinds become typed
// objects; custom kinds need a CRD serving their version and stay
// unstructured; namespaced objects without a namespace live in "default".
// It returns nil for a custom kind without a CRD.
func (c *Case) decodeParam(doc []byte) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(doc); err != nil {
		return nil, err
	}
	gvk := u.GroupVersionKind()
	if u.GetName() == "" {
		return nil, fmt.Errorf("%v has no metadata.name", gvk)
	}
	if crd, ok := c.crdFor(gvk.GroupKind()); ok {
		if crd.Namespaced && u.GetNamespace() == "" {
			u.SetNamespace(metav1.NamespaceDefault)
		}
		if !crd.Namespaced {
			u.SetNamespace("")
		}
		return u, nil
	}
	if !clientgoscheme.Scheme.Recognizes(gvk) {
		// A custom kind without a CRD does not exist in the cluster.
		return nil, nil
	}
	obj, err := decodeTyped(doc, gvk)
	if err != nil {
		return nil, err
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if builtinNamespaced(gvk.GroupKind()) {
		if accessor.GetNamespace() == "" {
			accessor.SetNamespace(metav1.NamespaceDefault)
		}
	} else {
		accessor.SetNamespace("")
	}
	return obj, nil
}

// decodeTyped decodes JSON into the client-go type registered for gvk,
// dropping unknown fields as the API server does, and sets its GVK.
func decodeTyped(doc []byte, gvk schema.GroupVersionKind) (runtime.Object, error) {
	obj, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, obj); err != nil {
		return nil, fmt.Errorf("decoding %v: %w", gvk, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj, nil
}

// decodeObject decodes a request object: typed when the client-go scheme
// knows its kind, unstructured otherwise.
func decodeObject(raw []byte) (runtime.Object, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	gvk := u.GroupVersionKind()
	if gvk.Group == metav1.GroupName && gvk.Version == "v1" {
		var obj runtime.Object
		switch gvk.Kind {
		case "CreateOptions":
			obj = &metav1.CreateOptions{}
		case "UpdateOptions":
			obj = &metav1.UpdateOptions{}
		case "DeleteOptions":
			obj = &metav1.DeleteOptions{}
		case "PatchOptions":
			obj = &metav1.PatchOptions{}
		}
		if obj != nil {
			if err := json.Unmarshal(raw, obj); err != nil {
				return nil, fmt.Errorf("decoding %v: %w", gvk, err)
			}
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			return obj, nil
		}
	}
	if clientgoscheme.Scheme.Recognizes(gvk) {
		return decodeTyped(raw, gvk)
	}
	return u, nil
}

func (c *Case) decodeRequestObjects() error {
	var err error
	if c.Object, err = decodeObject(c.Request.Object.Raw); err != nil {
		return fmt.Errorf("request.object: %w", err)
	}
	if c.OldObject, err = decodeObject(c.Request.OldObject.Raw); err != nil {
		return fmt.Errorf("request.oldObject: %w", err)
	}
	if c.Options, err = decodeObject(c.Request.Options.Raw); err != nil {
		return fmt.Errorf("request.options: %w", err)
	}
	if c.Options == nil {
		c.Options = defaultOptions(c.Request.Operation)
	}
	return nil
}

// defaultOptions returns the empty options object the API server passes for
// an operation when the request carries none.
func defaultOptions(op admissionv1.Operation) runtime.Object {
	tm := metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String()}
	switch op {
	case admissionv1.Create:
		tm.Kind = "CreateOptions"
		return &metav1.CreateOptions{TypeMeta: tm}
	case admissionv1.Update:
		tm.Kind = "UpdateOptions"
		return &metav1.UpdateOptions{TypeMeta: tm}
	case admissionv1.Delete:
		tm.Kind = "DeleteOptions"
		return &metav1.DeleteOptions{TypeMeta: tm}
	}
	return nil
}
