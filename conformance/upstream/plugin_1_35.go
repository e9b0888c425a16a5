//go:build vapkit_harness && vapkit_k8s_1_35

package upstream

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// newPlugin creates the plugin and initializes it as the server does: the
// 1.35 initializer takes the server's effective version.
func newPlugin(client kubernetes.Interface, dynClient dynamic.Interface, factory informers.SharedInformerFactory,
	authz authorizer.Authorizer, stop <-chan struct{}, mapper meta.RESTMapper) (*validating.Plugin, error) {
	plugin := validating.NewPlugin(nil)
	initializer.New(client, dynClient, factory, authz, utilfeature.DefaultFeatureGate,
		compatibility.DefaultBuildEffectiveVersion(), stop, mapper).Initialize(plugin)
	return plugin, nil
}
