package matching

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Exempt reports whether the API server never evaluates API-created
// ValidatingAdmissionPolicies for requests on gr (the request resource's
// group and resource, any version, subresource ignored). Such requests are
// allowed without looking at any policy.
//
// Two sets are exempt:
//
//   - the CEL admission configuration resources of admissionregistration.k8s.io:
//     validatingadmissionpolicies, validatingadmissionpolicybindings,
//     mutatingadmissionpolicies and mutatingadmissionpolicybindings
//     (apiserver generic/plugin.go; only static manifest policies, which
//     this library does not model, would see them);
//   - the non-persisted review resources kube-apiserver excludes from all
//     policies: authentication.k8s.io selfsubjectreviews and tokenreviews,
//     authorization.k8s.io localsubjectaccessreviews,
//     selfsubjectaccessreviews, selfsubjectrulesreviews and
//     subjectaccessreviews (kubernetes pkg/kubeapiserver/admission/exclusion).
//
// Validating and mutating webhook configurations are not exempt from
// policies.
func Exempt(gr schema.GroupResource) bool {
	switch gr.Group {
	case "admissionregistration.k8s.io":
		switch gr.Resource {
		case "validatingadmissionpolicies", "validatingadmissionpolicybindings",
			"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
			return true
		}
	case "authentication.k8s.io":
		switch gr.Resource {
		case "selfsubjectreviews", "tokenreviews":
			return true
		}
	case "authorization.k8s.io":
		switch gr.Resource {
		case "localsubjectaccessreviews", "selfsubjectaccessreviews",
			"selfsubjectrulesreviews", "subjectaccessreviews":
			return true
		}
	}
	return false
}
