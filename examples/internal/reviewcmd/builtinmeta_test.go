package reviewcmd

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// deploymentCase is a case file whose cluster holds one ConfigMap and
// whose request creates a Deployment; %STORED% and %OBJECT% are the
// metadata of the ConfigMap and of the Deployment.
const deploymentCase = suitePolicy + `---
apiVersion: v1
kind: ConfigMap
metadata: %STORED%
---
apiVersion: admission.k8s.io/v1
kind: AdmissionReview
request:
  uid: 0a000000-0000-0000-0000-000000000001
  kind: {group: apps, version: v1, kind: Deployment}
  resource: {group: apps, version: v1, resource: deployments}
  name: web
  namespace: default
  operation: CREATE
  userInfo: {username: alice}
  object:
    apiVersion: apps/v1
    kind: Deployment
    metadata: %OBJECT%
    spec: {replicas: 1}
---
` + expectHead + "allow: true\n"

// TestRunCaseBuiltinMetadata: a case whose built-in objects (a stored
// one, or the request's object) have metadata kube-apiserver refuses is
// an error naming the file, the line and the field.
func TestRunCaseBuiltinMetadata(t *testing.T) {
	tests := []struct {
		name, stored, object string
		want                 []string
	}{
		{"valid", "{name: c}", "{name: web}", nil},
		{"stored object", "{name: c, labels: {tier: front end}}", "{name: web}", []string{
			`DIR/x.yaml:%d: ConfigMap "c": metadata.labels: Invalid value: "front end": a valid label must be`}},
		{"request's object", "{name: c}", "{name: Web_1}", []string{
			`DIR/x.yaml:%d: AdmissionReview: request.object: Deployment "Web_1": metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.NewReplacer("%STORED%", tc.stored, "%OBJECT%", tc.object).Replace(deploymentCase)
			dir := writeDir(t, map[string]string{"x.yaml": text})
			var want []string
			for _, w := range tc.want {
				line := 1 + strings.Count(text[:strings.Index(text, "metadata: "+tc.stored)], "\n")
				if strings.Contains(w, "request.object") {
					line = 1 + strings.Count(text[:strings.Index(text, "metadata: "+tc.object)], "\n")
				}
				w = strings.ReplaceAll(w, "DIR/", dir+string(filepath.Separator))
				want = append(want, strings.Replace(w, "%d", strconv.Itoa(line), 1))
			}
			var out bytes.Buffer
			err := run(t.Context(), []string{"-format", "json", dir}, &out)
			var rep report
			if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
				t.Fatalf("%v: %v\n%s", err, jerr, out.String())
			}
			c := rep.Suites[0].Cases[0]
			if len(c.Refusals) != len(want) {
				t.Fatalf("refusals\n%s\nwant %d starting\n%s", strings.Join(c.Refusals, "\n"), len(want), strings.Join(want, "\n"))
			}
			for i, w := range want {
				if !strings.HasPrefix(c.Refusals[i], w) {
					t.Errorf("refusal %q, want one starting %q", c.Refusals[i], w)
				}
			}
			switch {
			case len(want) == 0:
				if c.Status == statusError {
					t.Errorf("status %s: %s", c.Status, c.Error)
				}
			case c.Status != statusError || !strings.Contains(c.Error, want[0]):
				t.Errorf("status %s, error %q; want an error with %q", c.Status, c.Error, want[0])
			}
		})
	}
}

// TestSuiteBuiltinMetadata: a suite whose test object, or a stored
// object of its files, has metadata kube-apiserver refuses is an error
// naming the file, the line and the field.
func TestSuiteBuiltinMetadata(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		files  map[string]string
		want   string
		wantOK bool
	}{
		{"valid", map[string]string{
			"s.yaml":      suiteHead + "policies: [p.yaml, stored.yaml]\ntests:\n- name: a\n  object: " + deployment + "\n  expect: {allow: true}\n",
			"stored.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n",
		}, "", true},
		{"test object", map[string]string{
			"s.yaml": suiteHead + "policies: [p.yaml]\ntests:\n- name: a\n  object:\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: web\n      labels: {app: -web}\n    spec: {replicas: 1}\n  expect: {allow: true}\n",
		}, `s.yaml:11: object: metadata.labels: Invalid value: "-web"`, false},
		{"stored object", map[string]string{
			"s.yaml":      suiteHead + "policies: [p.yaml, stored.yaml]\ntests:\n- name: a\n  object: " + deployment + "\n  expect: {allow: true}\n",
			"stored.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team.a\n",
		}, `stored.yaml:4: Namespace "team.a": metadata.name: Invalid value: "team.a": must not contain dots`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.files["p.yaml"] = suitePolicy
			dir := writeDir(t, tc.files)
			var out bytes.Buffer
			err := run(t.Context(), []string{"-format", "json", filepath.Join(dir, "s.yaml")}, &out)
			var rep report
			if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
				t.Fatalf("%v: %v\n%s", err, jerr, out.String())
			}
			c := rep.Suites[0].Cases[0]
			if tc.wantOK {
				if err != nil || c.Status == statusError {
					t.Errorf("run() = %v, status %s: %s", err, c.Status, c.Error)
				}
				return
			}
			want := filepath.Join(dir, tc.want)
			if exitCode(err) != 1 || c.Status != statusError || !strings.Contains(c.Error, want) {
				t.Errorf("exitCode %d, status %s, error %q; want an error with %q", exitCode(err), c.Status, c.Error, want)
			}
		})
	}
}
