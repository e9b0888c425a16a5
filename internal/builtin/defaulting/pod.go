package defaulting

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
)

// defaultPod defaults a Pod: what only a Pod gets (requests from limits, a
// negative grace period raised to 1, service links, host ports under host
// networking), then its spec as every pod template's, then its status.
func defaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	if spec.TerminationGracePeriodSeconds != nil && *spec.TerminationGracePeriodSeconds < 0 {
		spec.TerminationGracePeriodSeconds = ptrTo[int64](1)
	}
	for _, containers := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range containers {
			requestsFromLimits(&containers[i].Resources)
		}
	}
	// PodLevelResources is on in 1.37 but so is
	// PodLevelResourcesFixDefaulting, which moves the pod-level requests
	// and limits out of defaulting: nothing to do for them here.
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptrTo(corev1.DefaultEnableServiceLinks)
	}
	if spec.HostNetwork {
		for _, containers := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
			for i := range containers {
				for j := range containers[i].Ports {
					if port := &containers[i].Ports[j]; port.HostPort == 0 {
						port.HostPort = port.ContainerPort
					}
				}
			}
		}
	}
	// H2CContainerProbe (HTTP probe protocols) is off by default in 1.37.
	defaultPodSpec(spec)
	defaultPodStatus(&pod.Status)
}

// requestsFromLimits gives every resource with a limit and no request a
// request equal to the limit.
func requestsFromLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, limit := range r.Limits {
		if _, set := r.Requests[name]; !set {
			r.Requests[name] = limit.DeepCopy()
		}
	}
}

// defaultPodStatus keeps podIP and podIPs in step (podIP wins when they
// disagree) and rounds the statuses' resources.
func defaultPodStatus(status *corev1.PodStatus) {
	switch {
	case status.PodIP != "" && len(status.PodIPs) == 0:
		status.PodIPs = []corev1.PodIP{{IP: status.PodIP}}
	case status.PodIP == "" && len(status.PodIPs) > 0:
		status.PodIP = status.PodIPs[0].IP
	case status.PodIP != "" && status.PodIPs[0].IP != status.PodIP:
		status.PodIPs = []corev1.PodIP{{IP: status.PodIP}}
	}
	for _, statuses := range [][]corev1.ContainerStatus{status.InitContainerStatuses, status.ContainerStatuses, status.EphemeralContainerStatuses} {
		for i := range statuses {
			defaultResourceList(statuses[i].AllocatedResources)
			if statuses[i].Resources != nil {
				defaultResourceRequirements(statuses[i].Resources)
			}
		}
	}
	defaultResourceList(status.AllocatedResources)
	if status.Resources != nil {
		defaultResourceRequirements(status.Resources)
	}
}

// defaultPodTemplate defaults a PodTemplate's pod template.
func defaultPodTemplate(t *corev1.PodTemplate) {
	defaultPodTemplateSpec(&t.Template)
}

// defaultPodTemplateSpec defaults a pod template as every kind holding one
// (PodTemplate, ReplicationController, Deployment, Job, ...) has it
// defaulted: only its spec.
func defaultPodTemplateSpec(t *corev1.PodTemplateSpec) {
	defaultPodSpec(&t.Spec)
}

// defaultPodSpec defaults a pod spec wherever it appears: its own fields,
// then its volumes, containers of every sort and resource lists.
func defaultPodSpec(spec *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptrTo[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	defaultResourceList(spec.Overhead)
	if spec.Resources != nil {
		defaultResourceRequirements(spec.Resources)
	}
}

// defaultContainer defaults a container (an ephemeral container's common
// part included).
func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		from := c.Env[i].ValueFrom
		if from == nil {
			continue
		}
		if from.FieldRef != nil {
			defaultFieldSelector(from.FieldRef)
		}
		if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
			from.FileKeyRef.Optional = ptrTo(false)
		}
	}
	defaultResourceRequirements(&c.Resources)
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if probe != nil {
			defaultProbe(probe)
		}
	}
	if c.Lifecycle != nil {
		for _, handler := range []*corev1.LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if handler != nil && handler.HTTPGet != nil {
				defaultHTTPGet(handler.HTTPGet)
			}
		}
	}
}

// defaultProbe fills a probe's timing and thresholds and its handler.
func defaultProbe(p *corev1.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if p.HTTPGet != nil {
		defaultHTTPGet(p.HTTPGet)
	}
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptrTo("")
	}
}

// defaultHTTPGet fills an HTTP GET action's path and scheme.
func defaultHTTPGet(a *corev1.HTTPGetAction) {
	if a.Path == "" {
		a.Path = "/"
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}

// defaultFieldSelector fills a field reference's API version.
func defaultFieldSelector(s *corev1.ObjectFieldSelector) {
	if s.APIVersion == "" {
		s.APIVersion = "v1"
	}
}

// defaultVolume defaults a pod volume: a volume without a source is an
// emptyDir, and each source fills its own fields.
func defaultVolume(v *corev1.Volume) {
	if noVolumeSource(&v.VolumeSource) {
		v.VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	src := &v.VolumeSource
	// ImageVolume is GA (and locked on) in 1.37.
	if src.Image != nil && src.Image.PullPolicy == "" {
		src.Image.PullPolicy = pullPolicyFor(src.Image.Reference)
	}
	if src.HostPath != nil {
		defaultHostPath(src.HostPath)
	}
	if src.Secret != nil && src.Secret.DefaultMode == nil {
		src.Secret.DefaultMode = ptrTo(corev1.SecretVolumeSourceDefaultMode)
	}
	if src.ISCSI != nil {
		defaultISCSIInterface(&src.ISCSI.ISCSIInterface)
	}
	if src.RBD != nil {
		defaultRBD(&src.RBD.RBDPool, &src.RBD.RadosUser, &src.RBD.Keyring)
	}
	if src.DownwardAPI != nil {
		if src.DownwardAPI.DefaultMode == nil {
			src.DownwardAPI.DefaultMode = ptrTo(corev1.DownwardAPIVolumeSourceDefaultMode)
		}
		defaultDownwardAPIItems(src.DownwardAPI.Items)
	}
	if src.ConfigMap != nil && src.ConfigMap.DefaultMode == nil {
		src.ConfigMap.DefaultMode = ptrTo(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	if src.AzureDisk != nil {
		defaultAzureDisk(src.AzureDisk)
	}
	if src.Projected != nil {
		defaultProjected(src.Projected)
	}
	if src.ScaleIO != nil {
		defaultScaleIO(&src.ScaleIO.StorageMode, &src.ScaleIO.FSType)
	}
	if src.Ephemeral != nil && src.Ephemeral.VolumeClaimTemplate != nil {
		defaultPersistentVolumeClaimSpec(&src.Ephemeral.VolumeClaimTemplate.Spec)
	}
}

// noVolumeSource reports whether src names no source at all.
func noVolumeSource(src *corev1.VolumeSource) bool {
	v := reflect.ValueOf(src).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			return false
		}
	}
	return true
}

func defaultDownwardAPIItems(items []corev1.DownwardAPIVolumeFile) {
	for i := range items {
		if items[i].FieldRef != nil {
			defaultFieldSelector(items[i].FieldRef)
		}
	}
}

func defaultProjected(p *corev1.ProjectedVolumeSource) {
	if p.DefaultMode == nil {
		p.DefaultMode = ptrTo(corev1.ProjectedVolumeSourceDefaultMode)
	}
	for i := range p.Sources {
		source := &p.Sources[i]
		if source.DownwardAPI != nil {
			defaultDownwardAPIItems(source.DownwardAPI.Items)
		}
		if token := source.ServiceAccountToken; token != nil && token.ExpirationSeconds == nil {
			token.ExpirationSeconds = ptrTo[int64](60 * 60)
		}
	}
}

// ptrTo returns a pointer to a copy of v.
func ptrTo[T any](v T) *T { return &v }
