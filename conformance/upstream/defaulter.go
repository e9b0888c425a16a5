//go:build !vapkit_harness

package upstream

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/conformance/kubedefaults"
)

// GetObjectDefaulter defaults as kube-apiserver 1.37 does, with
// k8s.io/kubernetes's defaulting functions.
func (o objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter { return kubedefaults.Defaulter }
