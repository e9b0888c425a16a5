//go:build !vapkit_harness || vapkit_k8s_1_36

package upstream

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/featuregate"
)

// newPlugin creates the plugin and initializes it as the server does: the
// plugin constructor of 1.36 and 1.37 can fail, and the initializer takes
// the server's effective version.
func newPlugin(client kubernetes.Interface, dynClient dynamic.Interface, factory informers.SharedInformerFactory,
	authz authorizer.Authorizer, stop <-chan struct{}, mapper meta.RESTMapper) (*validating.Plugin, error) {
	plugin, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, fmt.Errorf("upstream: creating plugin: %w", err)
	}
	initializer.New(client, dynClient, factory, authz, featuregate.NewFeatureGate(),
		compatibility.DefaultBuildEffectiveVersion(), stop, mapper).Initialize(plugin)
	return plugin, nil
}
