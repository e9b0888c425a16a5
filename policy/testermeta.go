package policy

import (
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/internal/builtin/objectmeta"
)

// createRefusal returns the API server's error for creating req's object
// when the object is of a built-in kind whose metadata it refuses (a name
// its kind does not accept, a missing namespace, a bad label, ...): the
// server answers 422 before any admission policy sees the request, so a
// test of such an object must not pass. nil for other requests.
func createRefusal(req *Request) error {
	if req.Operation != admissionv1.Create || req.Object == nil || !objectmeta.Known(req.Kind.GroupKind()) {
		return nil
	}
	u, ok := req.Object.(*unstructured.Unstructured)
	if !ok {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(req.Object)
		if err != nil {
			return err
		}
		u = &unstructured.Unstructured{Object: content}
	}
	if u.GroupVersionKind() != req.Kind {
		u = u.DeepCopy()
		u.SetGroupVersionKind(req.Kind)
	}
	errs := objectmeta.Validate(u)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(req.Kind.GroupKind(), u.GetName(), errs)
}
