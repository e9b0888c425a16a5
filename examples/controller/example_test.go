package controller_test

import (
	"context"
	"fmt"
	"log"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/examples/controller"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

const policies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-latest}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"]}
  validations:
  - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
    message: "images must be pinned"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-latest}
spec:
  policyName: no-latest
  validationActions: [Deny]
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
`

// A Handler answers admission requests with a source's evaluator; in a
// cluster the source is a PolicySync and the handler is registered with
// controller-runtime's webhook server.
func ExampleHandler() {
	set, err := manifest.Load([]byte(policies), "policies.yaml")
	if err != nil {
		log.Fatal(err)
	}
	ev, err := policy.Compile(set.Policies, set.Bindings, policy.Options{Namespaces: matching.NewNamespaceMap(set.Namespaces...)})
	if err != nil {
		log.Fatal(err)
	}
	h := controller.NewHandler(controller.Static(ev), controller.HandlerOptions{})
	resp := h.Review(context.Background(), &admissionv1.AdmissionRequest{
		UID:       "1",
		Operation: admissionv1.Create,
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: "shop", Name: "web",
		Object: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","namespace":"shop"},` +
			`"spec":{"containers":[{"name":"web","image":"nginx:latest"}]}}`)},
	})
	fmt.Println(resp.Allowed, resp.Result.Code, resp.Result.Message)
	// Output: false 422 pods "web" is forbidden: ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest' denied request: images must be pinned
}
