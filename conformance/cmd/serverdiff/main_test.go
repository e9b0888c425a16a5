package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The defaulting cases load, and none is skipped: each is meant to run
// against a server.
func TestTestdataCasesLoad(t *testing.T) {
	files, err := caseFiles([]string{"testdata"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("want at least 10 cases in testdata, have %d", len(files))
	}
	for _, f := range files {
		c, skip, err := loadCase(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if skip != "" {
			t.Errorf("%s: skipped: %s", f, skip)
			continue
		}
		if c.obj.GetNamespace() == "" && c.nsd {
			t.Errorf("%s: namespaced object without a namespace", f)
		}
	}
}

// Cases a real server cannot answer the same way are skipped with a reason.
func TestSkips(t *testing.T) {
	for _, tc := range []struct{ file, reason string }{
		{"authorizer-checks.yaml", "authorizer"},
		{"match-subresource-scale.yaml", "subresource"},
	} {
		path := filepath.Join("..", "..", "..", "policy", "testdata", "cases", tc.file)
		_, skip, err := loadCase(path)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if !strings.Contains(skip, tc.reason) {
			t.Errorf("%s: skip reason %q, want one naming %q", tc.file, skip, tc.reason)
		}
	}
}

func TestCompare(t *testing.T) {
	obj := func(replicas float64, uid string) map[string]any {
		return map[string]any{
			"metadata": map[string]any{"name": "web", "uid": uid, "resourceVersion": "7"},
			"spec":     map[string]any{"replicas": replicas},
		}
	}
	for _, tc := range []struct {
		name     string
		srv, vk  *answer
		wantDiff []string // substrings, one per difference
	}{
		{"same", &answer{Allowed: true, Object: obj(1, "a")}, &answer{Allowed: true, Object: obj(1, "")}, nil},
		{"object", &answer{Allowed: true, Object: obj(1, "a")}, &answer{Allowed: true, Object: obj(2, "")}, []string{"replicas"}},
		{"decision", &answer{Allowed: true}, &answer{Code: 422, Reason: "Invalid", Message: "no"}, []string{"allowed", "code", "reason", "message"}},
		{"warnings", &answer{Allowed: true, Warnings: []string{"a"}}, &answer{Allowed: true}, []string{"warnings"}},
	} {
		got := compare(tc.srv, tc.vk)
		if len(got) != len(tc.wantDiff) {
			t.Errorf("%s: %d differences %q, want %d", tc.name, len(got), got, len(tc.wantDiff))
			continue
		}
		for i, w := range tc.wantDiff {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: difference %d is %q, want it to name %q", tc.name, i, got[i], w)
			}
		}
	}
}
