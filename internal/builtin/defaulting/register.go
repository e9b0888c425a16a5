package defaulting

import "k8s.io/apimachinery/pkg/runtime"

// Register adds to s the defaulting function of every built-in kind vapkit
// defaults. s must already know the kinds' types.
func Register(s *runtime.Scheme) {
	for _, add := range coreRegistrations {
		add(s)
	}
	for _, add := range groupRegistrations {
		add(s)
	}
}
