package defaulting

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Device requests ask for exactly one device unless told otherwise,
// tolerations compare with Equal, and a device taint without a time was
// added now, to the second, as the API server stamps it when it decodes
// the object.

// now is the clock of device taints; tests replace it.
var now = time.Now

func taintTime(t **metav1.Time) {
	if *t == nil {
		*t = &metav1.Time{Time: now().Truncate(time.Second)}
	}
}

// exactlyOne defaults an allocation mode and count, spelled alike in every
// version.
func exactlyOne[M ~string](mode *M, count *int64) {
	if *mode == "" {
		*mode = "ExactCount"
	}
	if *mode == "ExactCount" && *count == 0 {
		*count = 1
	}
}

func equalOperator[O ~string](op *O) {
	if *op == "" {
		*op = "Equal"
	}
}

func registerResourceV1(s *runtime.Scheme) {
	requests := func(rs []resourcev1.DeviceRequest) {
		for i := range rs {
			if e := rs[i].Exactly; e != nil {
				exactlyOne(&e.AllocationMode, &e.Count)
				for j := range e.Tolerations {
					equalOperator(&e.Tolerations[j].Operator)
				}
			}
			for j := range rs[i].FirstAvailable {
				sub := &rs[i].FirstAvailable[j]
				exactlyOne(&sub.AllocationMode, &sub.Count)
				for k := range sub.Tolerations {
					equalOperator(&sub.Tolerations[k].Operator)
				}
			}
		}
	}
	add(s, func(c *resourcev1.ResourceClaim) {
		requests(c.Spec.Devices.Requests)
		if a := c.Status.Allocation; a != nil {
			for i := range a.Devices.Results {
				for j := range a.Devices.Results[i].Tolerations {
					equalOperator(&a.Devices.Results[i].Tolerations[j].Operator)
				}
			}
		}
	}, func(l *resourcev1.ResourceClaimList) []resourcev1.ResourceClaim { return l.Items })

	add(s, func(t *resourcev1.ResourceClaimTemplate) {
		requests(t.Spec.Spec.Devices.Requests)
	}, func(l *resourcev1.ResourceClaimTemplateList) []resourcev1.ResourceClaimTemplate { return l.Items })

	add(s, func(sl *resourcev1.ResourceSlice) {
		for i := range sl.Spec.Devices {
			for j := range sl.Spec.Devices[i].Taints {
				taintTime(&sl.Spec.Devices[i].Taints[j].TimeAdded)
			}
		}
	}, func(l *resourcev1.ResourceSliceList) []resourcev1.ResourceSlice { return l.Items })

	add(s, func(r *resourcev1.DeviceTaintRule) {
		taintTime(&r.Spec.Taint.TimeAdded)
	}, func(l *resourcev1.DeviceTaintRuleList) []resourcev1.DeviceTaintRule { return l.Items })

}

func registerResourceV1beta2(s *runtime.Scheme) {
	requests := func(rs []resourcev1beta2.DeviceRequest) {
		for i := range rs {
			if e := rs[i].Exactly; e != nil {
				exactlyOne(&e.AllocationMode, &e.Count)
				for j := range e.Tolerations {
					equalOperator(&e.Tolerations[j].Operator)
				}
			}
			for j := range rs[i].FirstAvailable {
				sub := &rs[i].FirstAvailable[j]
				exactlyOne(&sub.AllocationMode, &sub.Count)
				for k := range sub.Tolerations {
					equalOperator(&sub.Tolerations[k].Operator)
				}
			}
		}
	}
	add(s, func(c *resourcev1beta2.ResourceClaim) {
		requests(c.Spec.Devices.Requests)
		if a := c.Status.Allocation; a != nil {
			for i := range a.Devices.Results {
				for j := range a.Devices.Results[i].Tolerations {
					equalOperator(&a.Devices.Results[i].Tolerations[j].Operator)
				}
			}
		}
	}, func(l *resourcev1beta2.ResourceClaimList) []resourcev1beta2.ResourceClaim { return l.Items })

	add(s, func(t *resourcev1beta2.ResourceClaimTemplate) {
		requests(t.Spec.Spec.Devices.Requests)
	}, func(l *resourcev1beta2.ResourceClaimTemplateList) []resourcev1beta2.ResourceClaimTemplate {
		return l.Items
	})

	add(s, func(sl *resourcev1beta2.ResourceSlice) {
		for i := range sl.Spec.Devices {
			for j := range sl.Spec.Devices[i].Taints {
				taintTime(&sl.Spec.Devices[i].Taints[j].TimeAdded)
			}
		}
	}, func(l *resourcev1beta2.ResourceSliceList) []resourcev1beta2.ResourceSlice { return l.Items })

	add(s, func(r *resourcev1beta2.DeviceTaintRule) {
		taintTime(&r.Spec.Taint.TimeAdded)
	}, func(l *resourcev1beta2.DeviceTaintRuleList) []resourcev1beta2.DeviceTaintRule { return l.Items })

}

func registerResourceV1beta1(s *runtime.Scheme) {
	requests := func(rs []resourcev1beta1.DeviceRequest) {
		for i := range rs {
			r := &rs[i]
			// A request with sub-requests names no class; only one that
			// does is a request for devices of its own.
			if r.DeviceClassName != "" {
				exactlyOne(&r.AllocationMode, &r.Count)
			}
			for j := range r.FirstAvailable {
				sub := &r.FirstAvailable[j]
				exactlyOne(&sub.AllocationMode, &sub.Count)
				for k := range sub.Tolerations {
					equalOperator(&sub.Tolerations[k].Operator)
				}
			}
			for j := range r.Tolerations {
				equalOperator(&r.Tolerations[j].Operator)
			}
		}
	}
	add(s, func(c *resourcev1beta1.ResourceClaim) {
		requests(c.Spec.Devices.Requests)
		if a := c.Status.Allocation; a != nil {
			for i := range a.Devices.Results {
				for j := range a.Devices.Results[i].Tolerations {
					equalOperator(&a.Devices.Results[i].Tolerations[j].Operator)
				}
			}
		}
	}, func(l *resourcev1beta1.ResourceClaimList) []resourcev1beta1.ResourceClaim { return l.Items })

	add(s, func(t *resourcev1beta1.ResourceClaimTemplate) {
		requests(t.Spec.Spec.Devices.Requests)
	}, func(l *resourcev1beta1.ResourceClaimTemplateList) []resourcev1beta1.ResourceClaimTemplate {
		return l.Items
	})

	add(s, func(sl *resourcev1beta1.ResourceSlice) {
		for i := range sl.Spec.Devices {
			if b := sl.Spec.Devices[i].Basic; b != nil {
				for j := range b.Taints {
					taintTime(&b.Taints[j].TimeAdded)
				}
			}
		}
	}, func(l *resourcev1beta1.ResourceSliceList) []resourcev1beta1.ResourceSlice { return l.Items })

}

func registerResourceV1alpha3(s *runtime.Scheme) {
	add(s, func(r *resourcev1alpha3.DeviceTaintRule) {
		taintTime(&r.Spec.Taint.TimeAdded)
	}, func(l *resourcev1alpha3.DeviceTaintRuleList) []resourcev1alpha3.DeviceTaintRule { return l.Items })

	add(s, func(r *resourcev1alpha3.ResourcePoolStatusRequest) {
		if r.Spec.Limit == nil {
			r.Spec.Limit = new(resourcev1alpha3.ResourcePoolStatusRequestLimitDefault)
		}
	}, func(l *resourcev1alpha3.ResourcePoolStatusRequestList) []resourcev1alpha3.ResourcePoolStatusRequest {
		return l.Items
	})

}
