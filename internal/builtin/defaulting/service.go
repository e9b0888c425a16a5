package defaulting

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// defaultService defaults a Service: session affinity (and its timeout
// for ClientIP), the ClusterIP type, each port's protocol and target port,
// the traffic policies, load balancer node ports and ingress IP modes.
func defaultService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityNone:
		spec.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptrTo(corev1.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		port := &spec.Ports[i]
		if port.Protocol == "" {
			port.Protocol = corev1.ProtocolTCP
		}
		if port.TargetPort == intstr.FromInt32(0) || port.TargetPort == intstr.FromString("") {
			port.TargetPort = intstr.FromInt32(port.Port)
		}
	}
	externallyAccessible := spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeNodePort ||
		spec.Type == corev1.ServiceTypeClusterIP && len(spec.ExternalIPs) > 0
	if externallyAccessible && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeClusterIP:
			spec.InternalTrafficPolicy = ptrTo(corev1.ServiceInternalTrafficPolicyCluster)
		}
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = ptrTo(true)
		}
		for i := range svc.Status.LoadBalancer.Ingress {
			if ingress := &svc.Status.LoadBalancer.Ingress[i]; ingress.IP != "" && ingress.IPMode == nil {
				ingress.IPMode = ptrTo(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
}

// defaultEndpoints gives every port of every subset the TCP protocol
// when it has none.
func defaultEndpoints(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if port := &ep.Subsets[i].Ports[j]; port.Protocol == "" {
				port.Protocol = corev1.ProtocolTCP
			}
		}
	}
}
