//go:build vapkit_harness

package upstream

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// GetObjectDefaulter is client-go's scheme, which defaults nothing, as in
// the harness before package upstream took kube's defaulting at 1.37 (for
// the mutating side, package mapdiff): the harness's module cannot import
// package kubedefaults, which requires k8s.io/kubernetes v1.37.2.
func (o objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter { return clientgoscheme.Scheme }
