package defaulting

import corev1 "k8s.io/api/core/v1"

// defaultPersistentVolume defaults a PersistentVolume: a pending phase,
// the Retain reclaim policy, the Filesystem volume mode, then its spec.
func defaultPersistentVolume(pv *corev1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = corev1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
	}
	defaultPersistentVolumeSpec(&pv.Spec)
}

// defaultPersistentVolumeSpec defaults a persistent volume spec wherever
// it appears (a PersistentVolume, a VolumeAttachment's inline volume): its
// capacity and its source's fields.
func defaultPersistentVolumeSpec(spec *corev1.PersistentVolumeSpec) {
	defaultResourceList(spec.Capacity)
	src := &spec.PersistentVolumeSource
	if src.HostPath != nil {
		defaultHostPath(src.HostPath)
	}
	if src.RBD != nil {
		defaultRBD(&src.RBD.RBDPool, &src.RBD.RadosUser, &src.RBD.Keyring)
	}
	if src.ISCSI != nil {
		defaultISCSIInterface(&src.ISCSI.ISCSIInterface)
	}
	if src.AzureDisk != nil {
		defaultAzureDisk(src.AzureDisk)
	}
	if src.ScaleIO != nil {
		defaultScaleIO(&src.ScaleIO.StorageMode, &src.ScaleIO.FSType)
	}
}

// defaultPersistentVolumeClaim defaults a PersistentVolumeClaim, also as a
// StatefulSet's volume claim template: a pending phase, its spec, and its
// status's resource lists.
func defaultPersistentVolumeClaim(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
	defaultPersistentVolumeClaimSpec(&pvc.Spec)
	defaultResourceList(pvc.Status.Capacity)
	defaultResourceList(pvc.Status.AllocatedResources)
}

// defaultPersistentVolumeClaimSpec defaults a claim spec wherever it
// appears: the Filesystem volume mode and rounded resources.
func defaultPersistentVolumeClaimSpec(spec *corev1.PersistentVolumeClaimSpec) {
	if spec.VolumeMode == nil {
		spec.VolumeMode = ptrTo(corev1.PersistentVolumeFilesystem)
	}
	defaultResourceList(spec.Resources.Limits)
	defaultResourceList(spec.Resources.Requests)
}

// defaultHostPath gives a host path the unset ("") type.
func defaultHostPath(h *corev1.HostPathVolumeSource) {
	if h.Type == nil {
		h.Type = ptrTo(corev1.HostPathUnset)
	}
}

func defaultISCSIInterface(iface *string) {
	if *iface == "" {
		*iface = "default"
	}
}

func defaultRBD(pool, user, keyring *string) {
	if *pool == "" {
		*pool = "rbd"
	}
	if *user == "" {
		*user = "admin"
	}
	if *keyring == "" {
		*keyring = "/etc/ceph/keyring"
	}
}

func defaultAzureDisk(d *corev1.AzureDiskVolumeSource) {
	if d.CachingMode == nil {
		d.CachingMode = ptrTo(corev1.AzureDataDiskCachingReadWrite)
	}
	if d.FSType == nil {
		d.FSType = ptrTo("ext4")
	}
	if d.ReadOnly == nil {
		d.ReadOnly = ptrTo(false)
	}
	if d.Kind == nil {
		d.Kind = ptrTo(corev1.AzureSharedBlobDisk)
	}
}

func defaultScaleIO(storageMode, fsType *string) {
	if *storageMode == "" {
		*storageMode = "ThinProvisioned"
	}
	if *fsType == "" {
		*fsType = "xfs"
	}
}
