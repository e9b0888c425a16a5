// Package defaulting holds vapkit's own defaulting functions for the
// built-in kinds: the values kube-apiserver 1.37 fills in when it decodes a
// built-in object and again after every mutation of a
// MutatingAdmissionPolicy (k8s.io/kubernetes v1.37.2 pkg/apis/GROUP/VERSION
// defaults.go and the +default markers of k8s.io/api, which its generated
// zz_generated.defaults.go apply). The functions are written for vapkit
// from the behaviour of those files, not copied, and are compared with them
// by the conformance module.
//
// [Register] adds them to a scheme, so that scheme.Default(obj) defaults a
// typed k8s.io/api object as the API server's scheme does.
//
// Every group version kube-apiserver 1.37 defaults is covered, one file
// per group (core.go for the core group, apps.go, batch.go, ... for the
// others). Feature gates are fixed at their 1.37 defaults; in the groups
// other than core, a cluster that turns MaxUnavailableStatefulSet,
// SELinuxMountReadWriteOncePod or VolumeLimitScaling off, or
// PodGroupPreemptionPolicy on, defaults those fields otherwise. One default is not a constant: a resource.k8s.io device
// taint without a time gets the current time, truncated to the second, as
// the API server stamps it.
package defaulting
