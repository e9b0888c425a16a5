// Package mutation applies the mutations of MutatingAdmissionPolicies as
// k8s.io/apiserver v0.37.2 applies them (pkg/admission/plugin/policy/mutating/patch):
// JSON patches through gopkg.in/evanphx/json-patch.v4, the library the API
// server uses, and apply configurations through structured-merge-diff with
// the schema of the object's kind.
//
// Schemas of built-in kinds are embedded as a structured-merge-diff schema
// generated ahead of time from kube-openapi's definitions of k8s.io/api
// (go generate: internal/gen), so that evaluation needs neither
// kube-openapi's validation/spec package nor an OpenAPI document.
package mutation

//go:generate go run -tags vapkit_gen ./internal/gen -o smd.yaml.gz.b64
