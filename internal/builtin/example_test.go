package builtin_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vapkit/vapkit/internal/builtin"
)

// A Deployment written without status and with a field the API does not
// know reaches CEL the way the API server holds it; a custom object does
// not.
func Example() {
	deployment, err := builtin.DecodeJSON([]byte(`{"apiVersion":"apps/v1","kind":"Deployment",
		"metadata":{"name":"web"},"spec":{"replicas":1,"paused":false,"unknownField":42}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := builtin.ToUnstructured(deployment)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec := m["spec"].(map[string]any)
	_, hasStatus := m["status"]
	_, hasPaused := spec["paused"]
	_, hasUnknown := spec["unknownField"]
	fmt.Println("status:", hasStatus, "paused:", hasPaused, "unknownField:", hasUnknown)

	widget, err := builtin.DecodeJSON([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"paused":false}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err = builtin.ToUnstructured(widget)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("custom:", m["spec"])

	mapper, err := builtin.NewMapper(builtin.CRD{Group: "example.com", Kind: "Widget", Plural: "widgets",
		Namespaced: true, Versions: []string{"v1", "v2"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	gvr, namespaced, err := mapper.ResourceFor(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	fmt.Println(gvr, namespaced, err)
	fmt.Println(mapper.KindFor(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "scale"))
	fmt.Println(mapper.EquivalentResourcesFor(schema.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}, ""))
	// Output:
	// status: true paused: false unknownField: false
	// custom: map[paused:false]
	// apps/v1, Resource=deployments true <nil>
	// autoscaling/v1, Kind=Scale
	// [example.com/v1, Resource=widgets example.com/v2, Resource=widgets]
}
