package defaulting

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Network policies apply to ingress (and egress when they have egress
// rules) unless their types are given, and their ports are TCP by default.
// Ingress class parameters are cluster-scoped by default. networking/v1beta1
// ingress paths match in the implementation's own way by default;
// networking/v1 ingresses are not defaulted.

func registerNetworkingV1(s *runtime.Scheme) {
	add(s, func(p *networkingv1.NetworkPolicy) {
		if len(p.Spec.PolicyTypes) == 0 {
			p.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
			if len(p.Spec.Egress) != 0 {
				p.Spec.PolicyTypes = append(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
			}
		}
		for i := range p.Spec.Ingress {
			defaultPolicyPorts(p.Spec.Ingress[i].Ports)
		}
		for i := range p.Spec.Egress {
			defaultPolicyPorts(p.Spec.Egress[i].Ports)
		}
	}, func(l *networkingv1.NetworkPolicyList) []networkingv1.NetworkPolicy { return l.Items })

	add(s, func(c *networkingv1.IngressClass) {
		if p := c.Spec.Parameters; p != nil && p.Scope == nil {
			p.Scope = new(networkingv1.IngressClassParametersReferenceScopeCluster)
		}
	}, func(l *networkingv1.IngressClassList) []networkingv1.IngressClass { return l.Items })

}

func defaultPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = new(corev1.ProtocolTCP)
		}
	}
}

func registerNetworkingV1beta1(s *runtime.Scheme) {
	add(s, func(in *networkingv1beta1.Ingress) {
		for i := range in.Spec.Rules {
			if http := in.Spec.Rules[i].HTTP; http != nil {
				for j := range http.Paths {
					if p := &http.Paths[j]; p.PathType == nil {
						p.PathType = new(networkingv1beta1.PathTypeImplementationSpecific)
					}
				}
			}
		}
	}, func(l *networkingv1beta1.IngressList) []networkingv1beta1.Ingress { return l.Items })

}
