package manifest

import (
	"encoding/json"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	admissionregistrationv1alpha1 "k8s.io/api/admissionregistration/v1alpha1"
	admissionregistrationv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kinds of the mutating admission policy API.
const (
	kindMutatingPolicy  = "MutatingAdmissionPolicy"
	kindMutatingBinding = "MutatingAdmissionPolicyBinding"
)

// SetMutatingPolicyDefaults applies the defaults the API server stores for
// a v1 MutatingAdmissionPolicy (kubernetes pkg/apis/admissionregistration
// defaults.go SetDefaults_MutatingAdmissionPolicySpec and the shared
// MatchResources defaults): spec.failurePolicy Fail and, when
// spec.matchConstraints is set, the defaults listed at
// [SetBindingDefaults]. reinvocationPolicy, patchType and
// parameterNotFoundAction have no default. It modifies p in place, fills
// only unset fields and is idempotent; a nil p is ignored.
func SetMutatingPolicyDefaults(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	if p == nil {
		return
	}
	if p.Spec.FailurePolicy == nil {
		fail := admissionregistrationv1.Fail
		p.Spec.FailurePolicy = &fail
	}
	setMatchResourcesDefaults(p.Spec.MatchConstraints)
}

// SetMutatingBindingDefaults applies the defaults the API server stores for
// a v1 MutatingAdmissionPolicyBinding: those of spec.matchResources, when
// set, as [SetBindingDefaults]. A nil b is ignored.
func SetMutatingBindingDefaults(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	if b == nil {
		return
	}
	setMatchResourcesDefaults(b.Spec.MatchResources)
}

// decodeMutating decodes a MutatingAdmissionPolicy or binding of any served
// version into v1 with the server's defaults; ok is false for other kinds.
//
// The three versions of k8s.io/api v0.37.2 have the same fields with the
// same JSON names (v1alpha1's ReinvocationPolicyType is an alias of v1's),
// so the API server's conversion is a field-by-field copy; it is done here
// through JSON, and a test checks that every field survives the trip both
// ways. v1alpha1 defaults paramRef.parameterNotFoundAction to Deny before
// conversion, as for validating bindings.
func decodeMutating(raw []byte, apiVersion, kind string) (obj runtime.Object, ok bool, fe *fieldError) {
	if kind != kindMutatingPolicy && kind != kindMutatingBinding {
		return nil, false, nil
	}
	switch apiVersion {
	case admissionRegistrationV1:
		if kind == kindMutatingPolicy {
			p, fe := decodeStrict[admissionregistrationv1.MutatingAdmissionPolicy](raw, nil)
			if fe != nil {
				return nil, true, fe
			}
			SetMutatingPolicyDefaults(p)
			return p, true, nil
		}
		b, fe := decodeStrict[admissionregistrationv1.MutatingAdmissionPolicyBinding](raw, nil)
		if fe != nil {
			return nil, true, fe
		}
		SetMutatingBindingDefaults(b)
		return b, true, nil
	case admissionRegistrationV1beta1:
		if kind == kindMutatingPolicy {
			return convertMutating[admissionregistrationv1beta1.MutatingAdmissionPolicy, admissionregistrationv1.MutatingAdmissionPolicy](raw, nil, SetMutatingPolicyDefaults)
		}
		return convertMutating[admissionregistrationv1beta1.MutatingAdmissionPolicyBinding, admissionregistrationv1.MutatingAdmissionPolicyBinding](raw, nil, SetMutatingBindingDefaults)
	case admissionRegistrationV1alpha1:
		if kind == kindMutatingPolicy {
			return convertMutating[admissionregistrationv1alpha1.MutatingAdmissionPolicy, admissionregistrationv1.MutatingAdmissionPolicy](raw, nil, SetMutatingPolicyDefaults)
		}
		return convertMutating[admissionregistrationv1alpha1.MutatingAdmissionPolicyBinding, admissionregistrationv1.MutatingAdmissionPolicyBinding](raw,
			func(b *admissionregistrationv1alpha1.MutatingAdmissionPolicyBinding) {
				if r := b.Spec.ParamRef; r != nil && r.ParameterNotFoundAction == nil {
					deny := admissionregistrationv1alpha1.DenyAction
					r.ParameterNotFoundAction = &deny
				}
			}, SetMutatingBindingDefaults)
	}
	return nil, false, nil
}

// convertMutating decodes raw strictly as In, applies before, copies it
// into Out through JSON, sets the v1 apiVersion and applies after.
func convertMutating[In, Out any, PIn interface{ *In }, POut interface {
	*Out
	runtime.Object
}](raw []byte, before func(PIn), after func(POut)) (runtime.Object, bool, *fieldError) {
	in, fe := decodeStrict[In](raw, nil)
	if fe != nil {
		return nil, true, fe
	}
	if before != nil {
		before(PIn(in))
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, true, &fieldError{msg: fmt.Sprintf("converting to %s: %v", admissionRegistrationV1, err)}
	}
	out := POut(new(Out))
	if err := json.Unmarshal(b, out); err != nil {
		return nil, true, &fieldError{msg: fmt.Sprintf("converting to %s: %v", admissionRegistrationV1, err)}
	}
	gvk := out.GetObjectKind().GroupVersionKind()
	out.GetObjectKind().SetGroupVersionKind(admissionregistrationv1.SchemeGroupVersion.WithKind(gvk.Kind))
	after(out)
	return out, true, nil
}
