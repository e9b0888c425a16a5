package manifest

import (
	v1 "k8s.io/api/admissionregistration/v1"
	v1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	v1beta1 "k8s.io/api/admissionregistration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The v1beta1 and v1alpha1 ValidatingAdmissionPolicy types of k8s.io/api
// v0.37.2 have exactly the fields of v1 (the v1alpha1 binding gained
// validationActions, paramRef.selector and paramRef.parameterNotFoundAction
// before v1beta1 was cut), so the API server's generated conversion is a
// field-by-field copy. Leaf structs are converted with Go conversions, which
// stop compiling if a field is ever added to one version only.

// policyFromV1beta1 converts a v1beta1 policy to v1.
func policyFromV1beta1(in *v1beta1.ValidatingAdmissionPolicy) *v1.ValidatingAdmissionPolicy {
	s := &in.Spec
	out := &v1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionRegistrationV1, Kind: kindPolicy},
		ObjectMeta: in.ObjectMeta,
		Spec: v1.ValidatingAdmissionPolicySpec{
			MatchConstraints: matchResourcesFromV1beta1(s.MatchConstraints),
			FailurePolicy:    convertPtr[v1.FailurePolicyType](s.FailurePolicy),
			Validations:      mapSlice(s.Validations, func(x v1beta1.Validation) v1.Validation { return v1.Validation(x) }),
			AuditAnnotations: mapSlice(s.AuditAnnotations, func(x v1beta1.AuditAnnotation) v1.AuditAnnotation { return v1.AuditAnnotation(x) }),
			MatchConditions:  mapSlice(s.MatchConditions, func(x v1beta1.MatchCondition) v1.MatchCondition { return v1.MatchCondition(x) }),
			Variables:        mapSlice(s.Variables, func(x v1beta1.Variable) v1.Variable { return v1.Variable(x) }),
		},
		Status: v1.ValidatingAdmissionPolicyStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			Conditions:         in.Status.Conditions,
		},
	}
	if s.ParamKind != nil {
		pk := v1.ParamKind(*s.ParamKind)
		out.Spec.ParamKind = &pk
	}
	if tc := in.Status.TypeChecking; tc != nil {
		out.Status.TypeChecking = &v1.TypeChecking{
			ExpressionWarnings: mapSlice(tc.ExpressionWarnings, func(x v1beta1.ExpressionWarning) v1.ExpressionWarning { return v1.ExpressionWarning(x) }),
		}
	}
	return out
}

// bindingFromV1beta1 converts a v1beta1 binding to v1.
func bindingFromV1beta1(in *v1beta1.ValidatingAdmissionPolicyBinding) *v1.ValidatingAdmissionPolicyBinding {
	s := &in.Spec
	out := &v1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionRegistrationV1, Kind: kindBinding},
		ObjectMeta: in.ObjectMeta,
		Spec: v1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        s.PolicyName,
			MatchResources:    matchResourcesFromV1beta1(s.MatchResources),
			ValidationActions: convertEnums[v1.ValidationAction](s.ValidationActions),
		},
	}
	if r := s.ParamRef; r != nil {
		out.Spec.ParamRef = &v1.ParamRef{
			Name:                    r.Name,
			Namespace:               r.Namespace,
			Selector:                r.Selector,
			ParameterNotFoundAction: convertPtr[v1.ParameterNotFoundActionType](r.ParameterNotFoundAction),
		}
	}
	return out
}

func matchResourcesFromV1beta1(in *v1beta1.MatchResources) *v1.MatchResources {
	if in == nil {
		return nil
	}
	return &v1.MatchResources{
		NamespaceSelector: in.NamespaceSelector,
		ObjectSelector:    in.ObjectSelector,
		ResourceRules: mapSlice(in.ResourceRules, func(x v1beta1.NamedRuleWithOperations) v1.NamedRuleWithOperations {
			return v1.NamedRuleWithOperations(x)
		}),
		ExcludeResourceRules: mapSlice(in.ExcludeResourceRules, func(x v1beta1.NamedRuleWithOperations) v1.NamedRuleWithOperations {
			return v1.NamedRuleWithOperations(x)
		}),
		MatchPolicy: convertPtr[v1.MatchPolicyType](in.MatchPolicy),
	}
}

// policyFromV1alpha1 converts a v1alpha1 policy to v1.
func policyFromV1alpha1(in *v1alpha1.ValidatingAdmissionPolicy) *v1.ValidatingAdmissionPolicy {
	s := &in.Spec
	out := &v1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionRegistrationV1, Kind: kindPolicy},
		ObjectMeta: in.ObjectMeta,
		Spec: v1.ValidatingAdmissionPolicySpec{
			MatchConstraints: matchResourcesFromV1alpha1(s.MatchConstraints),
			FailurePolicy:    convertPtr[v1.FailurePolicyType](s.FailurePolicy),
			Validations:      mapSlice(s.Validations, func(x v1alpha1.Validation) v1.Validation { return v1.Validation(x) }),
			AuditAnnotations: mapSlice(s.AuditAnnotations, func(x v1alpha1.AuditAnnotation) v1.AuditAnnotation { return v1.AuditAnnotation(x) }),
			MatchConditions:  mapSlice(s.MatchConditions, func(x v1alpha1.MatchCondition) v1.MatchCondition { return v1.MatchCondition(x) }),
			Variables:        mapSlice(s.Variables, func(x v1alpha1.Variable) v1.Variable { return v1.Variable(x) }),
		},
		Status: v1.ValidatingAdmissionPolicyStatus{
			ObservedGeneration: in.Status.ObservedGeneration,
			Conditions:         in.Status.Conditions,
		},
	}
	if s.ParamKind != nil {
		pk := v1.ParamKind(*s.ParamKind)
		out.Spec.ParamKind = &pk
	}
	if tc := in.Status.TypeChecking; tc != nil {
		out.Status.TypeChecking = &v1.TypeChecking{
			ExpressionWarnings: mapSlice(tc.ExpressionWarnings, func(x v1alpha1.ExpressionWarning) v1.ExpressionWarning { return v1.ExpressionWarning(x) }),
		}
	}
	return out
}

// bindingFromV1alpha1 converts a v1alpha1 binding to v1. Apply
// setV1alpha1ParamRefDefaults first, as the API server defaults the object
// in the version it was written in before converting it.
func bindingFromV1alpha1(in *v1alpha1.ValidatingAdmissionPolicyBinding) *v1.ValidatingAdmissionPolicyBinding {
	s := &in.Spec
	out := &v1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionRegistrationV1, Kind: kindBinding},
		ObjectMeta: in.ObjectMeta,
		Spec: v1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        s.PolicyName,
			MatchResources:    matchResourcesFromV1alpha1(s.MatchResources),
			ValidationActions: convertEnums[v1.ValidationAction](s.ValidationActions),
		},
	}
	if r := s.ParamRef; r != nil {
		out.Spec.ParamRef = &v1.ParamRef{
			Name:                    r.Name,
			Namespace:               r.Namespace,
			Selector:                r.Selector,
			ParameterNotFoundAction: convertPtr[v1.ParameterNotFoundActionType](r.ParameterNotFoundAction),
		}
	}
	return out
}

func matchResourcesFromV1alpha1(in *v1alpha1.MatchResources) *v1.MatchResources {
	if in == nil {
		return nil
	}
	return &v1.MatchResources{
		NamespaceSelector: in.NamespaceSelector,
		ObjectSelector:    in.ObjectSelector,
		ResourceRules: mapSlice(in.ResourceRules, func(x v1alpha1.NamedRuleWithOperations) v1.NamedRuleWithOperations {
			return v1.NamedRuleWithOperations(x)
		}),
		ExcludeResourceRules: mapSlice(in.ExcludeResourceRules, func(x v1alpha1.NamedRuleWithOperations) v1.NamedRuleWithOperations {
			return v1.NamedRuleWithOperations(x)
		}),
		MatchPolicy: convertPtr[v1.MatchPolicyType](in.MatchPolicy),
	}
}

// setV1alpha1ParamRefDefaults applies the one default that only v1alpha1
// has: its ParamRef documents "Default to `Deny`" for
// parameterNotFoundAction (kubernetes pkg/apis/admissionregistration/
// v1alpha1 defaults.go SetDefaults_ParamRef), while v1beta1 and v1 declare
// the field required and default nothing. A binding written in v1alpha1
// therefore reads back in v1 with Deny.
func setV1alpha1ParamRefDefaults(b *v1alpha1.ValidatingAdmissionPolicyBinding) {
	if r := b.Spec.ParamRef; r != nil && r.ParameterNotFoundAction == nil {
		deny := v1alpha1.DenyAction
		r.ParameterNotFoundAction = &deny
	}
}

// mapSlice converts each element of in with f; nil stays nil so that
// omitted lists stay omitted.
func mapSlice[In, Out any](in []In, f func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i := range in {
		out[i] = f(in[i])
	}
	return out
}

// convertEnums converts a list of string-based enum values of one version to
// the same values of another.
func convertEnums[Out ~string, In ~string](in []In) []Out {
	return mapSlice(in, func(v In) Out { return Out(v) })
}

// convertPtr converts the value behind a pointer to a string-based enum of
// another version.
func convertPtr[Out ~string, In ~string](in *In) *Out {
	if in == nil {
		return nil
	}
	v := Out(*in)
	return &v
}
