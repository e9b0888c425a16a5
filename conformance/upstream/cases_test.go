package upstream_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/vapkit/vapkit/conformance/upstream"
)

func TestMain(m *testing.M) {
	upstream.SilenceKlog()
	os.Exit(m.Run())
}

// caseDirs are searched in order; the project's copy wins over shared/.
var caseDirs = []string{
	filepath.Join("..", "..", "policy", "testdata", "cases"),
	filepath.Join("..", "..", "..", "shared", "conformance", "cases"),
	"/work/shared/conformance/cases",
}

func findCases(t *testing.T) (string, []string) {
	t.Helper()
	for _, dir := range caseDirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err == nil && len(files) > 0 {
			return dir, files
		}
	}
	t.Skipf("no conformance cases found in %v", caseDirs)
	return "", nil
}

// expectedFile is NAME.expected.json.
type expectedFile struct {
	Response *admissionv1.AdmissionResponse `json:"response"`
	Oracle   *struct {
		Alternatives []*admissionv1.AdmissionResponse `json:"alternatives"`
	} `json:"oracle"`
}

// comparable reduces a response to the compared fields.
type comparable struct {
	Allowed          bool
	Code             int32
	Reason           string
	Message          string
	Warnings         []string
	AuditAnnotations map[string]string
}

func reduce(r *admissionv1.AdmissionResponse) comparable {
	c := comparable{Allowed: r.Allowed, Warnings: r.Warnings, AuditAnnotations: r.AuditAnnotations}
	if len(c.Warnings) == 0 {
		c.Warnings = nil
	}
	if len(c.AuditAnnotations) == 0 {
		c.AuditAnnotations = nil
	}
	if r.Result != nil {
		c.Code, c.Reason, c.Message = r.Result.Code, string(r.Result.Reason), r.Result.Message
	}
	return c
}

func contains(list []comparable, c comparable) bool {
	for _, x := range list {
		if reflect.DeepEqual(x, c) {
			return true
		}
	}
	return false
}

func TestUpstreamReproducesSharedCases(t *testing.T) {
	_, files := findCases(t)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			expData, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			var exp expectedFile
			if err := json.Unmarshal(expData, &exp); err != nil || exp.Response == nil {
				t.Fatalf("bad expected file: %v", err)
			}
			want := []comparable{reduce(exp.Response)}
			if exp.Oracle != nil {
				for _, alt := range exp.Oracle.Alternatives {
					want = append(want, reduce(alt))
				}
			}
			c, err := upstream.ParseCase(data, name)
			if err != nil {
				t.Fatalf("ParseCase: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			outcomes, err := upstream.Outcomes(ctx, c, 120)
			if err != nil {
				t.Fatalf("Outcomes: %v", err)
			}
			var got []comparable
			for _, o := range outcomes {
				got = append(got, reduce(o))
			}
			if !contains(got, want[0]) {
				t.Errorf("Outcomes(%s) = %s, want it to contain %s", name, dump(got), dump(want[:1]))
			}
			for _, g := range got {
				if !contains(want, g) {
					t.Errorf("Outcomes(%s) produced %s, not among expected %s", name, dump([]comparable{g}), dump(want))
				}
			}
		})
	}
}

func dump(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
