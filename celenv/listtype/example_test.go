package listtype_test

import (
	"fmt"

	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vapkit/vapkit/celenv/listtype"
)

func ExampleConcatLists() {
	ports := &spec.Schema{
		VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{
			"x-kubernetes-list-type":     "map",
			"x-kubernetes-list-map-keys": []any{"name"},
		}},
		SchemaProps: spec.SchemaProps{Type: []string{"array"}},
	}
	a := []any{
		map[string]any{"name": "http", "port": int64(80)},
		map[string]any{"name": "https", "port": int64(443)},
	}
	b := []any{map[string]any{"name": "http", "port": int64(8080)}, map[string]any{"name": "metrics", "port": int64(9090)}}
	merged, err := listtype.ConcatLists(ports, a, b)
	fmt.Println(merged, err)
	eq, err := listtype.EqualLists(ports, a, []any{a[1], a[0]})
	fmt.Println(eq, err)
	// Output:
	// [map[name:http port:8080] map[name:https port:443] map[name:metrics port:9090]] <nil>
	// true <nil>
}
