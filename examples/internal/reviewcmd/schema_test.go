package reviewcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSchemaMatchesTypes checks that suite.schema.json, beside FORMAT.md,
// names exactly the fields the parser reads: the yaml tags of the Go types
// of the format, and the fields of the Expectation parser.
func TestSchemaMatchesTypes(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "review", "suite.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
			OneOf      []struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"oneOf"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	deny := schema.Defs["deny"]
	var denyObject map[string]json.RawMessage
	for _, alt := range deny.OneOf {
		if alt.Properties != nil {
			denyObject = alt.Properties
		}
	}
	tests := []struct {
		name  string
		props map[string]json.RawMessage
		want  []string
	}{
		{"Suite", schema.Properties, yamlFields(reflect.TypeFor[Suite]())},
		{"$defs.test", schema.Defs["test"].Properties, yamlFields(reflect.TypeFor[SuiteTest]())},
		{"$defs.userInfo", schema.Defs["userInfo"].Properties, yamlFields(reflect.TypeFor[UserInfo]())},
		{"$defs.groupVersionResource", schema.Defs["groupVersionResource"].Properties, yamlFields(reflect.TypeFor[GroupVersionResource]())},
		{"$defs.expect", schema.Defs["expect"].Properties, expectFields},
		{"$defs.expectation", schema.Defs["expectation"].Properties, append([]string{"apiVersion", "kind", "metadata"}, expectFields...)},
		{"$defs.deny", denyObject, denyFields},
		{"$defs.patchOperation", schema.Defs["patchOperation"].Properties, patchOpFields},
	}
	for _, tc := range tests {
		var got []string
		for k := range tc.props {
			got = append(got, k)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: schema properties differ from the Go type's fields (-go +schema):\n%s", tc.name, diff)
		}
	}
}

// yamlFields lists the yaml names of the exported fields of struct type t.
func yamlFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, name)
	}
	return out
}
