package mutation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/vapkit/vapkit/internal/mutation"
)

// FuzzApplyJSONPatch applies arbitrary patches to a typed Deployment: no
// panic (testdata/fuzz holds the `test` of the whole document without a
// value that makes json-patch v4 panic), the live object never changes,
// and a success returns an object.
func FuzzApplyJSONPatch(f *testing.F) {
	for _, s := range []string{
		`[{"op":"add","path":"/metadata/labels/a","value":"b"}]`,
		`[{"op":"replace","path":"/spec/replicas","value":"x"}]`,
		`[{"op":"remove","path":"/spec/template/spec/containers/0"}]`,
		`[{"op":"move","from":"/spec","path":"/spec/x"}]`,
		`[{"op":"copy","from":"/metadata","path":"/metadata/labels/m"}]`,
		`[{"op":"test","path":"","value":{}}]`,
		`[{"op":"replace","path":"","value":[]}]`,
		`[{"op":"add","path":"/spec/template/spec/containers/-1","value":{"name":"z"}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := jsonpatch.DecodePatch(raw)
		if err != nil {
			return
		}
		live := typedDeployment(t)
		out, err := mutation.ApplyJSONPatch(p, live, deploymentGVK)
		if err == nil && out == nil {
			t.Fatal("ApplyJSONPatch() = nil, nil")
		}
		if !cmp.Equal(toMap(t, typedDeployment(t)), toMap(t, live)) {
			t.Fatal("the live object changed")
		}
	})
}
