package kubedefaults

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// typicalCoreObjects are hand-written core/v1 objects as users write them,
// compared beside the generated ones.
func typicalCoreObjects() []runtime.Object {
	labels := map[string]string{"app": "web"}
	container := corev1.Container{
		Name:  "web",
		Image: "registry.example.com/web:1.2",
		Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		Env: []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			GRPC: &corev1.GRPCAction{Port: 9090}}},
	}
	spec := corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
		Containers:     []corev1.Container{container, {Name: "sidecar", Image: "envoy@sha256:" + sha}},
		Volumes: []corev1.Volume{
			{Name: "scratch"},
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "web"}}}},
			{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
			{Name: "model", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "models/llm:latest"}}},
		},
	}
	hostNetworkSpec := spec.DeepCopy()
	hostNetworkSpec.HostNetwork = true
	return []runtime.Object{
		&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}, Spec: spec},
		&corev1.Pod{Spec: *hostNetworkSpec, Status: corev1.PodStatus{PodIP: "10.0.0.1"}},
		&corev1.PodTemplate{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
		&corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}}},
		&corev1.Service{Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443, TargetPort: intstr.FromString("https")}}}},
		&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080}}}},
		&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, SessionAffinity: corev1.ServiceAffinityClientIP},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}, {Hostname: "lb.example.com"}}}}},
		&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}},
		&corev1.Service{Spec: corev1.ServiceSpec{ExternalIPs: []string{"192.0.2.2"}, Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}}}},
		&corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}, Ports: []corev1.EndpointPort{{Port: 80}}}}},
		&corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}}},
		&corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1.5Gi")}}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "team-"}},
		&corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.0001"), corev1.ResourcePods: resource.MustParse("110")}}},
		&corev1.Secret{StringData: map[string]string{"k": "v"}},
		&corev1.ConfigMap{},
		&corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer,
			Max:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
			Min:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceEphemeralStorage: resource.MustParse("1Mi")},
		}, {Type: corev1.LimitTypePod, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}}},
		&corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("1500u")}}},
		&corev1.PodLogOptions{Container: "web"},
	}
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
