package manifest_test

import (
	"strings"
	"testing"

	"github.com/vapkit/vapkit/policy/manifest"
)

func TestDecodeUnservedAdmissionRegistrationKind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{{
		name: "unknown version",
		in:   "apiVersion: admissionregistration.k8s.io/v2\nkind: ValidatingAdmissionPolicy\nmetadata: {name: p}\n",
		want: `in.yaml:1: document 1 (ValidatingAdmissionPolicy/p): no matches for kind "ValidatingAdmissionPolicy" in version "admissionregistration.k8s.io/v2"`,
	}, {
		name: "misspelt kind",
		in:   "# a comment\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBindings\nmetadata: {name: b}\n",
		want: `in.yaml:2: document 1 (ValidatingAdmissionPolicyBindings/b): no matches for kind "ValidatingAdmissionPolicyBindings" in version "admissionregistration.k8s.io/v1"`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := manifest.Decode([]byte(tc.in), "in.yaml")
			if err == nil || err.Error() != tc.want {
				t.Errorf("Decode() error = %v, want %s", err, tc.want)
			}
		})
	}
	// A served kind of the group that vapkit does not evaluate stays an
	// ordinary object.
	in := "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: w}\n"
	if _, err := manifest.Decode([]byte(in), "in.yaml"); err != nil {
		t.Errorf("Decode(ValidatingWebhookConfiguration) error = %v", err)
	}
}

const deploymentTypo = `apiVersion: v1
kind: ConfigMap
metadata: {name: limits}
data: {max: "5"}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replica: 3
`

const reviewWrongType = `apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: "1"
  kind: {group: apps, version: v1, kind: Deployment}
  resource: {group: apps, version: v1, resource: deployments}
  operation: CREATE
  object:
    metadata: {name: web}
    spec:
      replicas: "3"
`

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{{
		name: "unknown field of a built-in kind",
		in:   deploymentTypo,
		want: `in.yaml:11: document 2 (Deployment/web): unknown field "spec.replica"`,
	}, {
		name: "wrong type inside an AdmissionReview's object, kind from the request",
		in:   reviewWrongType,
		want: `in.yaml:11: document 1 (AdmissionReview): request.object.spec.replicas: expected integer, got string`,
	}, {
		name: "wrong type of a ConfigMap's data",
		in:   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  max: 5\n",
		want: `in.yaml:5: document 1 (ConfigMap/c): data.max: expected string, got number`,
	}, {
		name: "inside a List",
		in:   `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containerz":[]}}]}`,
		want: `in.yaml:1: document 1, item 1 (Pod/p): unknown field "spec.containerz"`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := manifest.Decode([]byte(tc.in), "in.yaml"); err != nil {
				t.Fatalf("Decode() error = %v; only strict decoding should fail", err)
			}
			_, err := manifest.DecodeWith([]byte(tc.in), "in.yaml", manifest.Options{Strict: true})
			if err == nil || err.Error() != tc.want {
				t.Errorf("DecodeWith(Strict) error = %v, want %s", err, tc.want)
			}
		})
	}
	// Custom kinds stay free-form.
	crd := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {anything: [1]}\n"
	if _, err := manifest.DecodeWith([]byte(crd), "in.yaml", manifest.Options{Strict: true}); err != nil {
		t.Errorf("DecodeWith(Strict) of a custom kind: %v", err)
	}
}

func TestDocumentLocate(t *testing.T) {
	t.Parallel()
	in := `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: p
  labels:
    app.kubernetes.io/name: x
spec:
  validations:
  - expression: "true"
  - expression: "object.spec.replicas <"
`
	docs, err := manifest.Decode([]byte(in), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{
		"spec.validations[1].expression":          10,
		"spec.validations[1].message":             10, // not written: its parent's line
		"metadata.labels[app.kubernetes.io/name]": 6,
		"spec.failurePolicy":                      7, // defaulted: the nearest written parent
		"":                                        1,
	} {
		if got := docs[0].Locate(path); got != want {
			t.Errorf("Locate(%q) = %d, want %d", path, got, want)
		}
	}
	if strings.Contains(in, "\t") {
		t.Fatal("tabs in YAML")
	}
}
