package defaulting

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// An endpoint slice's ports get an empty name and TCP when they have none.

func registerDiscoveryV1(s *runtime.Scheme) {
	add(s, func(e *discoveryv1.EndpointSlice) {
		for i := range e.Ports {
			defaultEndpointPort(&e.Ports[i].Name, &e.Ports[i].Protocol)
		}
	}, func(l *discoveryv1.EndpointSliceList) []discoveryv1.EndpointSlice { return l.Items })

}

func registerDiscoveryV1beta1(s *runtime.Scheme) {
	add(s, func(e *discoveryv1beta1.EndpointSlice) {
		for i := range e.Ports {
			defaultEndpointPort(&e.Ports[i].Name, &e.Ports[i].Protocol)
		}
	}, func(l *discoveryv1beta1.EndpointSliceList) []discoveryv1beta1.EndpointSlice { return l.Items })

}

func defaultEndpointPort(name **string, protocol **corev1.Protocol) {
	if *name == nil {
		*name = new("")
	}
	if *protocol == nil {
		*protocol = new(corev1.ProtocolTCP)
	}
}
