package typecheck_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/typecheck"
)

// ExampleValidateBuiltinMetadata reports what kube-apiserver answers (422
// Invalid) when a Service's name is no DNS label and a label value has a
// space, before any admission policy sees the object.
func ExampleValidateBuiltinMetadata() {
	obj := &unstructured.Unstructured{}
	err := yaml.Unmarshal([]byte(`
apiVersion: v1
kind: Service
metadata:
  name: web.frontend
  namespace: default
  labels: {tier: front end}
spec:
  ports: [{port: 80}]
`), &obj.Object)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range typecheck.ValidateBuiltinMetadata(obj) {
		fmt.Println(e.Field, e.Type, e.BadValue)
	}
	// Output:
	// metadata.name Invalid value web.frontend
	// metadata.labels Invalid value front end
}
