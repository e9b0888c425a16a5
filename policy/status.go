// The HTTP status a denied or aborted request receives.

package policy

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// forbidden builds the status a denied client receives, as the API server's
// admission.NewForbidden plus the dispatcher's reason and cause.
func (st *requestState) forbidden(d deniedDecision) *metav1.Status {
	var msg string
	if d.binding != "" {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	} else {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	status := apierrors.NewForbidden(st.req.Resource.GroupResource(), st.deniedName(), errors.New(msg)).ErrStatus
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	status.Reason = reason
	status.Code = reasonToCode(reason)
	status.Details.Causes = append(status.Details.Causes, metav1.StatusCause{Message: msg})
	return &status
}

// deniedName is the name admission.NewForbidden gives the request: its
// name, else the object's name or generateName.
func (st *requestState) deniedName() string {
	if st.req.Name != "" {
		return st.req.Name
	}
	name := "Unknown"
	if obj := st.req.Object; obj != nil {
		if acc, err := meta.Accessor(obj); err != nil {
			name = "Unknown/errorGettingName"
		} else if acc.GetName() != "" {
			name = acc.GetName()
		} else if acc.GetGenerateName() != "" {
			name = acc.GetGenerateName()
		}
	}
	return name
}

// reasonToCode maps a denial reason to its HTTP code, as the API server does.
func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return 403
	case metav1.StatusReasonUnauthorized:
		return 401
	case metav1.StatusReasonRequestEntityTooLarge:
		return 413
	}
	return 422
}

// statusFor converts an error that aborted the request to the status the API
// server would send: API errors keep their status, others are internal errors.
func statusFor(err error) *metav1.Status {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		return &st
	}
	st := apierrors.NewInternalError(err).ErrStatus
	return &st
}
