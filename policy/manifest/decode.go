package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sjson "sigs.k8s.io/json"

	"github.com/vapkit/vapkit/internal/builtin"
)

// API versions and kinds that decode into typed objects.
const (
	admissionRegistrationV1       = "admissionregistration.k8s.io/v1"
	admissionRegistrationV1beta1  = "admissionregistration.k8s.io/v1beta1"
	admissionRegistrationV1alpha1 = "admissionregistration.k8s.io/v1alpha1"
	kindPolicy                    = "ValidatingAdmissionPolicy"
	kindBinding                   = "ValidatingAdmissionPolicyBinding"
)

// docSource describes where an object being decoded sits in the file.
type docSource struct {
	index  int       // 1-based document number
	item   int       // 1-based List item, or 0
	line   int       // line where the object starts
	prefix fieldPath // path of the object inside its document (items[i] for List items)
	loc    locator
}

// listDoc is the shape of a v1 List, with its items left undecoded.
type listDoc struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ListMeta   `json:"metadata"`
	Items           []json.RawMessage `json:"items"`
}

// document decodes one top-level document (already JSON) and records the
// result or the error.
func (d *decoder) document(raw []byte, src *docSource) {
	objs, err := d.object(raw, src)
	if err != nil {
		d.fail(err)
		return
	}
	d.docs = append(d.docs, objs...)
}

// object decodes one JSON object, or the items of a List, into documents.
func (d *decoder) object(raw []byte, src *docSource) ([]Document, *Error) {
	e := &Error{Document: src.index, Item: src.item, Line: src.line}
	raw = bytes.TrimSpace(raw)
	if bytes.Equal(raw, []byte("null")) {
		if src.item > 0 {
			e.Err = fmt.Errorf("expected an object, got null")
			return nil, e
		}
		return nil, nil // an empty document
	}
	if len(raw) == 0 || raw[0] != '{' {
		e.Err = fmt.Errorf("expected an object, got %s", jsonKindOf(raw))
		return nil, e
	}

	// One pass decodes the whole object and rejects duplicate keys; typed
	// kinds are decoded again, strictly, from raw below.
	var m map[string]any
	strictErrs, err := sjson.UnmarshalStrict(raw, &m, sjson.DisallowDuplicateFields)
	if err != nil {
		e.Err = fmt.Errorf("invalid JSON: %s", cleanJSONError(err))
		return nil, e
	}
	apiVersion, fe := stringMember(m, "apiVersion")
	kind, kindErr := stringMember(m, "kind")
	if fe == nil {
		fe = kindErr
	}
	e.Kind = kind
	e.Name = metadataName(m)
	if len(strictErrs) > 0 {
		// Walk the tokens again only now, to get the path of the duplicate.
		fe = checkStrict(raw, nil, nil)
		if fe == nil {
			fe = &fieldError{msg: cleanJSONError(strictErrs[0])}
		}
	}
	if fe != nil {
		return nil, d.fieldErr(e, src, fe)
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return nil, d.fieldErr(e, src, &fieldError{path: fieldPath{{key: "apiVersion"}}, msg: "apiVersion: " + err.Error()})
	}

	if apiVersion == "v1" && e.Kind == "List" {
		if src.item > 0 {
			e.Err = fmt.Errorf("a List inside a List is not supported")
			return nil, e
		}
		return d.list(raw, src, e)
	}

	obj, fe := decodeKind(raw, apiVersion, e.Kind, m)
	if fe == nil && d.strict {
		fe = checkBuiltin(raw, obj, apiVersion, e.Kind)
	}
	if fe != nil {
		return nil, d.fieldErr(e, src, fe)
	}
	return []Document{{Index: src.index, Item: src.item, Line: src.line, Object: obj, loc: src.loc, prefix: src.prefix}}, nil
}

// list decodes the items of a v1 List document.
func (d *decoder) list(raw []byte, src *docSource, e *Error) ([]Document, *Error) {
	l, fe := decodeStrict[listDoc](raw, nil)
	if fe != nil {
		return nil, d.fieldErr(e, src, fe)
	}
	var out []Document
	for i, item := range l.Items {
		p := src.prefix.child("items").index(i)
		itemSrc := &docSource{index: src.index, item: i + 1, line: src.line, prefix: p, loc: src.loc}
		if line := src.loc.locate(p, false); line > 0 {
			itemSrc.line = line
		}
		docs, err := d.object(item, itemSrc)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// fieldErr completes e with a field problem, locating its line when possible.
func (d *decoder) fieldErr(e *Error, src *docSource, fe *fieldError) *Error {
	e.Path = fe.path.String()
	e.Err = fe
	full := append(append(fieldPath{}, src.prefix...), fe.path...)
	if len(fe.path) > 0 {
		if line := src.loc.locate(full, fe.dup); line > 0 {
			e.Line = line
		}
	}
	return e
}

// decodeKind decodes an object of the given apiVersion and kind into its Go
// type: typed for the kinds listed in the package documentation, otherwise
// unstructured.
func decodeKind(raw []byte, apiVersion, kind string, m map[string]any) (runtime.Object, *fieldError) {
	if obj, ok, fe := decodeMutating(raw, apiVersion, kind); ok {
		return obj, fe
	}
	switch {
	case apiVersion == admissionRegistrationV1 && kind == kindPolicy:
		p, fe := decodeStrict[admissionregistrationv1.ValidatingAdmissionPolicy](raw, nil)
		if fe != nil {
			return nil, fe
		}
		SetPolicyDefaults(p)
		return p, nil
	case apiVersion == admissionRegistrationV1 && kind == kindBinding:
		b, fe := decodeStrict[admissionregistrationv1.ValidatingAdmissionPolicyBinding](raw, nil)
		if fe != nil {
			return nil, fe
		}
		SetBindingDefaults(b)
		return b, nil
	case apiVersion == admissionRegistrationV1beta1 && kind == kindPolicy:
		in, fe := decodeStrict[admissionregistrationv1beta1.ValidatingAdmissionPolicy](raw, nil)
		if fe != nil {
			return nil, fe
		}
		p := policyFromV1beta1(in)
		SetPolicyDefaults(p)
		return p, nil
	case apiVersion == admissionRegistrationV1beta1 && kind == kindBinding:
		in, fe := decodeStrict[admissionregistrationv1beta1.ValidatingAdmissionPolicyBinding](raw, nil)
		if fe != nil {
			return nil, fe
		}
		b := bindingFromV1beta1(in)
		SetBindingDefaults(b)
		return b, nil
	case apiVersion == admissionRegistrationV1alpha1 && kind == kindPolicy:
		in, fe := decodeStrict[admissionregistrationv1alpha1.ValidatingAdmissionPolicy](raw, nil)
		if fe != nil {
			return nil, fe
		}
		p := policyFromV1alpha1(in)
		SetPolicyDefaults(p)
		return p, nil
	case apiVersion == admissionRegistrationV1alpha1 && kind == kindBinding:
		in, fe := decodeStrict[admissionregistrationv1alpha1.ValidatingAdmissionPolicyBinding](raw, nil)
		if fe != nil {
			return nil, fe
		}
		setV1alpha1ParamRefDefaults(in)
		b := bindingFromV1alpha1(in)
		SetBindingDefaults(b)
		return b, nil
	case apiVersion == "v1" && kind == "Namespace":
		ns, fe := decodeStrict[corev1.Namespace](raw, nil)
		if fe != nil {
			return nil, fe
		}
		return ns, nil
	case apiVersion == "admission.k8s.io/v1" && kind == "AdmissionReview":
		r, fe := decodeStrict[admissionv1.AdmissionReview](raw, nil)
		if fe != nil {
			return nil, fe
		}
		if r.Request != nil {
			compactRaw(&r.Request.Object)
			compactRaw(&r.Request.OldObject)
			compactRaw(&r.Request.Options)
		}
		return r, nil
	default:
		if gv, err := schema.ParseGroupVersion(apiVersion); err == nil && gv.Group == admissionregistrationv1.GroupName &&
			!builtin.Scheme().Recognizes(gv.WithKind(kind)) {
			// Not a parameter object: a typo or an API version no server
			// serves, which kubectl would refuse to create.
			return nil, &fieldError{path: fieldPath{{key: "apiVersion"}},
				msg: fmt.Sprintf("no matches for kind %q in version %q", kind, apiVersion)}
		}
		return decodeUnstructured(m)
	}
}

// checkBuiltin checks, for strict decoding, an object of a kind k8s.io/api
// defines against its Go type, and the objects of an AdmissionReview's
// request against theirs.
func checkBuiltin(raw []byte, obj runtime.Object, apiVersion, kind string) *fieldError {
	if r, ok := obj.(*admissionv1.AdmissionReview); ok {
		if r.Request == nil {
			return nil
		}
		for _, o := range []struct {
			name string
			raw  []byte
		}{{"object", r.Request.Object.Raw}, {"oldObject", r.Request.OldObject.Raw}} {
			if fe := checkRequestObject(o.raw, r.Request.Kind, fieldPath{{key: "request"}, {key: o.name}}); fe != nil {
				return fe
			}
		}
		return nil
	}
	if _, ok := obj.(*unstructured.Unstructured); !ok {
		return nil // typed kinds were decoded strictly already
	}
	return checkAsBuiltin(raw, schema.FromAPIVersionAndKind(apiVersion, kind), nil)
}

// checkRequestObject checks one object of an admission request, under the
// kind it names itself or else the request's kind.
func checkRequestObject(raw []byte, reqKind metav1.GroupVersionKind, base fieldPath) *fieldError {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil // not an object; evaluation reports it
	}
	gvk := schema.GroupVersionKind(reqKind)
	if tm.APIVersion != "" && tm.Kind != "" {
		gvk = schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
	}
	return checkAsBuiltin(raw, gvk, base)
}

// checkAsBuiltin checks raw against the Go type of gvk when k8s.io/api
// defines the kind; other kinds are not checked.
func checkAsBuiltin(raw []byte, gvk schema.GroupVersionKind, base fieldPath) *fieldError {
	if gvk.Kind == "" {
		return nil
	}
	typed, err := builtin.Scheme().New(gvk)
	if err != nil {
		return nil
	}
	return checkStrict(raw, reflect.TypeOf(typed).Elem(), base)
}

// decodeStrict decodes raw into a new T, rejecting unknown fields, duplicate
// fields and type mismatches; base is the path of raw within its document.
// The decoder's own errors lack list indices
// ("Go struct field Validation.spec.validations.expression"), so on failure
// the checker walks raw again to name the first problem precisely.
func decodeStrict[T any](raw []byte, base fieldPath) (*T, *fieldError) {
	obj := new(T)
	strictErrs, err := sjson.UnmarshalStrict(raw, obj)
	if err == nil && len(strictErrs) == 0 {
		return obj, nil
	}
	if fe := checkStrict(raw, reflect.TypeFor[T](), base); fe != nil {
		return nil, fe
	}
	if err == nil {
		err = strictErrs[0]
	}
	return nil, &fieldError{path: base, msg: prefixPath(base, cleanJSONError(err))}
}

// decodeUnstructured wraps an object of any other kind, already decoded
// with duplicate keys rejected. Its content is free-form, but metadata must
// have the shape of ObjectMeta, so that names, namespaces and labels are
// reliable.
func decodeUnstructured(m map[string]any) (runtime.Object, *fieldError) {
	if md, ok := m["metadata"]; ok {
		raw, err := json.Marshal(md)
		if err != nil {
			return nil, &fieldError{path: fieldPath{{key: "metadata"}}, msg: "metadata: " + cleanJSONError(err)}
		}
		if _, fe := decodeStrict[metav1.ObjectMeta](raw, fieldPath{{key: "metadata"}}); fe != nil {
			return nil, fe
		}
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// stringMember reads a required top-level string member such as apiVersion.
func stringMember(m map[string]any, name string) (string, *fieldError) {
	p := fieldPath{{key: name}}
	v, ok := m[name]
	if !ok || v == nil {
		return "", &fieldError{path: p, msg: name + " not set"}
	}
	s, ok := v.(string)
	if !ok {
		return "", &fieldError{path: p, msg: fmt.Sprintf("%s: expected string, got %s", name, valueKind(v))}
	}
	if s == "" {
		return "", &fieldError{path: p, msg: name + " not set"}
	}
	return s, nil
}

// metadataName returns metadata.name when it is a string, for messages.
func metadataName(m map[string]any) string {
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return name
}

// valueKind names the JSON type of a decoded value.
func valueKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	default:
		return "number"
	}
}

// jsonKindOf names the JSON type of a raw value by its first byte.
func jsonKindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// compactRaw removes insignificant whitespace from a raw extension, so that
// objects read from YAML and from indented JSON hold the same bytes.
func compactRaw(r *runtime.RawExtension) {
	if len(r.Raw) == 0 {
		return
	}
	var b bytes.Buffer
	if err := json.Compact(&b, r.Raw); err == nil {
		r.Raw = b.Bytes()
	}
}
