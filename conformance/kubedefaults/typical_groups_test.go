package kubedefaults

import "k8s.io/apimachinery/pkg/runtime"

// typicalGroupObjects are hand-written objects of the non-core groups'
// kinds, compared beside the generated ones.
func typicalGroupObjects() []runtime.Object {
	return nil
}
