package defaulting

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagev1alpha1 "k8s.io/api/storage/v1alpha1"
	storagev1beta1 "k8s.io/api/storage/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Storage classes delete their volumes and bind them immediately by
// default. CSI drivers need attaching and otherwise opt in to nothing; with
// the SELinuxMountReadWriteOncePod and VolumeLimitScaling feature gates on
// (1.37 defaults) their SELinux mount and scheduling-when-missing flags are
// false too. A volume attachment's inline persistent volume gets the
// volume source defaults of a core PersistentVolume, but not its reclaim
// policy, mode or phase.

func registerStorageV1(s *runtime.Scheme) {
	addGroupKind(s, func(l *storagev1.StorageClassList) []storagev1.StorageClass { return l.Items }, func(c *storagev1.StorageClass) {
		defaultStorageClass(&c.ReclaimPolicy, &c.VolumeBindingMode)
	})
	addGroupKind(s, func(l *storagev1.CSIDriverList) []storagev1.CSIDriver { return l.Items }, func(d *storagev1.CSIDriver) {
		sp := &d.Spec
		defaultCSIDriverFlags(&sp.AttachRequired, &sp.PodInfoOnMount, &sp.StorageCapacity, &sp.RequiresRepublish, &sp.SELinuxMount, &sp.PreventPodSchedulingIfMissing)
		if sp.FSGroupPolicy == nil {
			sp.FSGroupPolicy = new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
		}
		if len(sp.VolumeLifecycleModes) == 0 {
			sp.VolumeLifecycleModes = append(sp.VolumeLifecycleModes, storagev1.VolumeLifecyclePersistent)
		}
	})
	addGroupKind(s, func(l *storagev1.VolumeAttachmentList) []storagev1.VolumeAttachment { return l.Items }, func(a *storagev1.VolumeAttachment) {
		defaultInlineVolume(a.Spec.Source.InlineVolumeSpec)
	})
}

func registerStorageV1beta1(s *runtime.Scheme) {
	addGroupKind(s, func(l *storagev1beta1.StorageClassList) []storagev1beta1.StorageClass { return l.Items }, func(c *storagev1beta1.StorageClass) {
		if c.ReclaimPolicy == nil {
			c.ReclaimPolicy = new(corev1.PersistentVolumeReclaimDelete)
		}
		if c.VolumeBindingMode == nil {
			c.VolumeBindingMode = new(storagev1beta1.VolumeBindingImmediate)
		}
	})
	addGroupKind(s, func(l *storagev1beta1.CSIDriverList) []storagev1beta1.CSIDriver { return l.Items }, func(d *storagev1beta1.CSIDriver) {
		sp := &d.Spec
		defaultCSIDriverFlags(&sp.AttachRequired, &sp.PodInfoOnMount, &sp.StorageCapacity, &sp.RequiresRepublish, &sp.SELinuxMount, &sp.PreventPodSchedulingIfMissing)
		if sp.FSGroupPolicy == nil {
			sp.FSGroupPolicy = new(storagev1beta1.ReadWriteOnceWithFSTypeFSGroupPolicy)
		}
		if len(sp.VolumeLifecycleModes) == 0 {
			sp.VolumeLifecycleModes = append(sp.VolumeLifecycleModes, storagev1beta1.VolumeLifecyclePersistent)
		}
	})
	addGroupKind(s, func(l *storagev1beta1.VolumeAttachmentList) []storagev1beta1.VolumeAttachment { return l.Items }, func(a *storagev1beta1.VolumeAttachment) {
		defaultInlineVolume(a.Spec.Source.InlineVolumeSpec)
	})
}

func registerStorageV1alpha1(s *runtime.Scheme) {
	addGroupKind(s, func(l *storagev1alpha1.VolumeAttachmentList) []storagev1alpha1.VolumeAttachment { return l.Items }, func(a *storagev1alpha1.VolumeAttachment) {
		defaultInlineVolume(a.Spec.Source.InlineVolumeSpec)
	})
}

func defaultStorageClass(reclaim **corev1.PersistentVolumeReclaimPolicy, binding **storagev1.VolumeBindingMode) {
	if *reclaim == nil {
		*reclaim = new(corev1.PersistentVolumeReclaimDelete)
	}
	if *binding == nil {
		*binding = new(storagev1.VolumeBindingImmediate)
	}
}

func defaultCSIDriverFlags(attach, podInfo, capacity, republish, seLinux, prevent **bool) {
	if *attach == nil {
		*attach = new(true)
	}
	for _, f := range []**bool{podInfo, capacity, republish, seLinux, prevent} {
		if *f == nil {
			*f = new(false)
		}
	}
}

// defaultInlineVolume defaults the parts of an inline persistent volume
// spec that a core PersistentVolume's spec would get.
func defaultInlineVolume(pv *corev1.PersistentVolumeSpec) {
	if pv == nil {
		return
	}
	roundUpToMilli(pv.Capacity)
	src := &pv.PersistentVolumeSource
	if src.HostPath != nil && src.HostPath.Type == nil {
		src.HostPath.Type = new(corev1.HostPathUnset)
	}
	if r := src.RBD; r != nil {
		if r.RBDPool == "" {
			r.RBDPool = "rbd"
		}
		if r.RadosUser == "" {
			r.RadosUser = "admin"
		}
		if r.Keyring == "" {
			r.Keyring = "/etc/ceph/keyring"
		}
	}
	if i := src.ISCSI; i != nil && i.ISCSIInterface == "" {
		i.ISCSIInterface = "default"
	}
	if a := src.AzureDisk; a != nil {
		if a.CachingMode == nil {
			a.CachingMode = new(corev1.AzureDataDiskCachingReadWrite)
		}
		if a.FSType == nil {
			a.FSType = new("ext4")
		}
		if a.ReadOnly == nil {
			a.ReadOnly = new(false)
		}
		if a.Kind == nil {
			a.Kind = new(corev1.AzureSharedBlobDisk)
		}
	}
	if sc := src.ScaleIO; sc != nil {
		if sc.StorageMode == "" {
			sc.StorageMode = "ThinProvisioned"
		}
		if sc.FSType == "" {
			sc.FSType = "xfs"
		}
	}
}

// roundUpToMilli rounds every quantity of a resource list up to a
// thousandth, as the API server stores them.
func roundUpToMilli(l corev1.ResourceList) {
	for name, q := range l {
		q.RoundUp(-3)
		l[name] = q
	}
}
