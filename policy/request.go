package policy

import (
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vapkit/vapkit/internal/builtin"
)

// Request is one admission request as the validating admission stage of the
// API server sees it. Objects are decoded: typed k8s.io/api structs or
// *unstructured.Unstructured. Built-in kinds are shown to CEL as they look
// after a round trip through their k8s.io/api type, as the server holds them.
type Request struct {
	// UID identifies the request; it is copied into the response.
	UID string
	// Operation is CREATE, UPDATE, DELETE or CONNECT.
	Operation admissionv1.Operation
	// Kind, Resource and SubResource describe the request as issued.
	Kind        schema.GroupVersionKind
	Resource    schema.GroupVersionResource
	SubResource string
	// Name and Namespace of the object; for a Namespace object the
	// namespace is its own name, as the API server sets it. A CREATE with
	// generateName has no name.
	Name, Namespace string
	// UserInfo is the requesting user.
	UserInfo authenticationv1.UserInfo
	// DryRun is true for dry-run requests.
	DryRun bool
	// Options is the operation's options object (CreateOptions,
	// UpdateOptions, DeleteOptions, ...); nil shows as null.
	Options runtime.Object
	// Object and OldObject are the new and old objects; DELETE has no
	// Object and CREATE no OldObject.
	Object, OldObject runtime.Object
}

// RequestFromAdmission converts a webhook's AdmissionRequest. Objects given
// as raw JSON are decoded: built-in kinds into their k8s.io/api types, others
// into unstructured objects. The request is described by Kind, Resource and
// SubResource; when RequestKind and RequestResource are set (the webhook saw
// a converted request) they describe the request as issued and are used
// instead.
func RequestFromAdmission(r *admissionv1.AdmissionRequest) (*Request, error) {
	if r == nil {
		return nil, errors.New("admission request is missing")
	}
	out := &Request{
		UID:         string(r.UID),
		Operation:   r.Operation,
		Kind:        schema.GroupVersionKind(r.Kind),
		Resource:    schema.GroupVersionResource(r.Resource),
		SubResource: r.SubResource,
		Name:        r.Name,
		Namespace:   r.Namespace,
		UserInfo:    r.UserInfo,
		DryRun:      r.DryRun != nil && *r.DryRun,
	}
	if r.RequestKind != nil && r.RequestResource != nil {
		out.Kind = schema.GroupVersionKind(*r.RequestKind)
		out.Resource = schema.GroupVersionResource(*r.RequestResource)
		out.SubResource = r.RequestSubResource
	}
	var errs field.ErrorList
	decode := func(path string, ext runtime.RawExtension) runtime.Object {
		if ext.Object != nil {
			return ext.Object
		}
		if len(ext.Raw) == 0 || string(ext.Raw) == "null" {
			return nil
		}
		obj, err := builtin.DecodeJSON(ext.Raw)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath("request", path), "<raw>", err.Error()))
			return nil
		}
		return obj
	}
	out.Object = decode("object", r.Object)
	out.OldObject = decode("oldObject", r.OldObject)
	out.Options = decode("options", r.Options)
	if err := errs.ToAggregate(); err != nil {
		return nil, err
	}
	return out, nil
}

// validate reports requests that cannot be evaluated.
func (r *Request) validate() error {
	var errs field.ErrorList
	switch r.Operation {
	case admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("operation"), r.Operation,
			[]string{string(admissionv1.Create), string(admissionv1.Update), string(admissionv1.Delete), string(admissionv1.Connect)}))
	}
	if r.Resource.Resource == "" {
		errs = append(errs, field.Required(field.NewPath("resource", "resource"), ""))
	}
	if r.Kind.Kind == "" {
		errs = append(errs, field.Required(field.NewPath("kind", "kind"), ""))
	}
	if err := errs.ToAggregate(); err != nil {
		return fmt.Errorf("invalid request: %w", err)
	}
	return nil
}
