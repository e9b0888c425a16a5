package typecheck_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCustomResourceDecode: Decode prunes unknown fields and applies the
// schema's defaults, as the server decodes a custom resource, without
// modifying its argument; other kinds come back as they are.
func TestCustomResourceDecode(t *testing.T) {
	v := widgetValidator(t)
	for _, tc := range []struct {
		name, spec string
		want       map[string]any // the decoded spec
	}{
		{"default filled in", "spec: {size: small}", map[string]any{"size": "small", "mode": "fast"}},
		{"null replaced by the default", "spec: {size: small, mode: null}", map[string]any{"size": "small", "mode": "fast"}},
		{"set value kept", "spec: {size: small, mode: slow}", map[string]any{"size": "small", "mode": "slow"}},
		{"unknown field pruned", "spec: {size: small, extra: 1}", map[string]any{"size": "small", "mode": "fast"}},
		{"nullable null kept", "spec: {size: small, opt: null}", map[string]any{"size": "small", "mode": "fast", "opt": nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := widget(t, tc.spec)
			before := w.DeepCopy()
			got := v.Decode(w)
			if diff := cmp.Diff(before, w); diff != "" {
				t.Errorf("Decode modified its argument (-before +after):\n%s", diff)
			}
			spec, _, _ := unstructured.NestedMap(got.Object, "spec")
			if diff := cmp.Diff(tc.want, spec); diff != "" {
				t.Errorf("decoded spec (-want +got):\n%s", diff)
			}
		})
	}
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v9", "kind": "Widget", "extra": 1}}
	if got := v.Decode(other); got != other {
		t.Errorf("Decode(unknown kind) = %v, want its argument", got)
	}
	if got := v.Decode(nil); got != nil {
		t.Errorf("Decode(nil) = %v, want nil", got)
	}
}
