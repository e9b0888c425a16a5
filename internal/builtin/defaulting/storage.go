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
	add(s, func(c *storagev1.StorageClass) {
		defaultStorageClass(&c.ReclaimPolicy, &c.VolumeBindingMode)
	}, func(l *storagev1.StorageClassList) []storagev1.StorageClass { return l.Items })

	add(s, func(d *storagev1.CSIDriver) {
		sp := &d.Spec
		defaultCSIDriverFlags(&sp.AttachRequired, &sp.PodInfoOnMount, &sp.StorageCapacity, &sp.RequiresRepublish, &sp.SELinuxMount, &sp.PreventPodSchedulingIfMissing)
		if sp.FSGroupPolicy == nil {
			sp.FSGroupPolicy = new(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
		}
		if len(sp.VolumeLifecycleModes) == 0 {
			sp.VolumeLifecycleModes = append(sp.VolumeLifecycleModes, storagev1.VolumeLifecyclePersistent)
		}
	}, func(l *storagev1.CSIDriverList) []storagev1.CSIDriver { return l.Items })

	add(s, func(a *storagev1.VolumeAttachment) {
		if v := a.Spec.Source.InlineVolumeSpec; v != nil {
			defaultPersistentVolumeSpec(v)
		}
	}, func(l *storagev1.VolumeAttachmentList) []storagev1.VolumeAttachment { return l.Items })

}

func registerStorageV1beta1(s *runtime.Scheme) {
	add(s, func(c *storagev1beta1.StorageClass) {
		if c.ReclaimPolicy == nil {
			c.ReclaimPolicy = new(corev1.PersistentVolumeReclaimDelete)
		}
		if c.VolumeBindingMode == nil {
			c.VolumeBindingMode = new(storagev1beta1.VolumeBindingImmediate)
		}
	}, func(l *storagev1beta1.StorageClassList) []storagev1beta1.StorageClass { return l.Items })

	add(s, func(d *storagev1beta1.CSIDriver) {
		sp := &d.Spec
		defaultCSIDriverFlags(&sp.AttachRequired, &sp.PodInfoOnMount, &sp.StorageCapacity, &sp.RequiresRepublish, &sp.SELinuxMount, &sp.PreventPodSchedulingIfMissing)
		if sp.FSGroupPolicy == nil {
			sp.FSGroupPolicy = new(storagev1beta1.ReadWriteOnceWithFSTypeFSGroupPolicy)
		}
		if len(sp.VolumeLifecycleModes) == 0 {
			sp.VolumeLifecycleModes = append(sp.VolumeLifecycleModes, storagev1beta1.VolumeLifecyclePersistent)
		}
	}, func(l *storagev1beta1.CSIDriverList) []storagev1beta1.CSIDriver { return l.Items })

	add(s, func(a *storagev1beta1.VolumeAttachment) {
		if v := a.Spec.Source.InlineVolumeSpec; v != nil {
			defaultPersistentVolumeSpec(v)
		}
	}, func(l *storagev1beta1.VolumeAttachmentList) []storagev1beta1.VolumeAttachment { return l.Items })

}

func registerStorageV1alpha1(s *runtime.Scheme) {
	add(s, func(a *storagev1alpha1.VolumeAttachment) {
		if v := a.Spec.Source.InlineVolumeSpec; v != nil {
			defaultPersistentVolumeSpec(v)
		}
	}, func(l *storagev1alpha1.VolumeAttachmentList) []storagev1alpha1.VolumeAttachment { return l.Items })

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
