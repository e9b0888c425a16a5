package defaulting

import corev1 "k8s.io/api/core/v1"

// defaultResourceList rounds every quantity of l up to a whole milli-unit,
// as the API server stores resource quantities.
func defaultResourceList(l corev1.ResourceList) {
	for name, q := range l {
		q.RoundUp(-3)
		l[name] = q
	}
}

// defaultResourceRequirements rounds the limits and requests of r.
func defaultResourceRequirements(r *corev1.ResourceRequirements) {
	defaultResourceList(r.Limits)
	defaultResourceList(r.Requests)
}
