package typecheckdiff

import (
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"

	"github.com/vapkit/vapkit/policy/manifest"
	"github.com/vapkit/vapkit/typecheck"
)

// noWarnings is the annotation a testdata policy carries when neither
// checker is expected to warn; every other testdata policy must produce at
// least one warning, so that the corpus keeps exercising the checkers.
const noWarnings = "vapkit.io/typecheckdiff-warnings"

func newChecker(t testing.TB) *Checker {
	t.Helper()
	c, err := NewChecker()
	if err != nil {
		t.Fatalf("NewChecker() error: %v", err)
	}
	return c
}

// TestSchemasAgree checks that vapkit's ref inlining gives, for every
// built-in kind, the schema upstream's PopulateRefs gives from the same
// definitions.
func TestSchemasAgree(t *testing.T) {
	kinds, lookup, err := typecheck.BuiltinDefinitions()
	if err != nil {
		t.Fatalf("BuiltinDefinitions() error: %v", err)
	}
	if len(kinds) < 100 {
		t.Fatalf("BuiltinDefinitions() has %d kinds, want the whole of k8s.io/api", len(kinds))
	}
	gvks := make([]schema.GroupVersionKind, 0, len(kinds))
	for gvk := range kinds {
		gvks = append(gvks, gvk)
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	builtin := typecheck.BuiltinResolver()
	for _, gvk := range gvks {
		got, err := builtin.ResolveSchema(gvk)
		if err != nil {
			t.Errorf("BuiltinResolver().ResolveSchema(%v) error: %v", gvk, err)
			continue
		}
		want, err := resolver.PopulateRefs(lookup, kinds[gvk])
		if err != nil {
			t.Errorf("PopulateRefs(%q) error: %v", kinds[gvk], err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("BuiltinResolver().ResolveSchema(%v) differs from upstream's PopulateRefs(%q)", gvk, kinds[gvk])
		}
	}
}

// corpusPolicy is one policy of the corpus with the file it came from.
type corpusPolicy struct {
	file     string
	testdata bool // from this package's testdata
	policy   *admissionregistrationv1.ValidatingAdmissionPolicy
}

func loadCorpus(t *testing.T) []corpusPolicy {
	t.Helper()
	var out []corpusPolicy
	for _, dir := range []string{filepath.Join("..", "..", "policy", "testdata", "cases"), "testdata"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no policies in %s: %v", dir, err)
		}
		for _, f := range files {
			m, err := manifest.LoadFiles(f)
			if err != nil {
				t.Fatalf("manifest.LoadFiles(%q) error: %v", f, err)
			}
			for _, p := range m.Policies {
				out = append(out, corpusPolicy{file: f, testdata: dir == "testdata", policy: p})
			}
		}
	}
	return out
}

// TestCorpus compares the two checkers on every policy of the shared cases
// and of testdata.
func TestCorpus(t *testing.T) {
	c := newChecker(t)
	corpus := loadCorpus(t)
	if len(corpus) < 100 {
		t.Fatalf("corpus has %d policies, want at least 100", len(corpus))
	}
	for _, cp := range corpus {
		name := strings.TrimSuffix(filepath.Base(cp.file), ".yaml") + "/" + cp.policy.Name
		if cp.testdata {
			name = "testdata/" + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := c.Compare(cp.policy)
			if got.Diff != "" {
				t.Errorf("%s: policy %q: vapkit's warnings (-) differ from upstream's (+), after normalising type names:\n%s", cp.file, cp.policy.Name, got.Diff)
			}
			if !cp.testdata {
				return
			}
			wantNone := cp.policy.Annotations[noWarnings] == "none"
			if wantNone && len(got.Upstream) != 0 {
				t.Errorf("%s: policy %q: upstream warnings = %v, want none (annotation %s)", cp.file, cp.policy.Name, got.Upstream, noWarnings)
			}
			if !wantNone && len(got.Upstream) == 0 {
				t.Errorf("%s: policy %q: upstream has no warnings, want some (or annotate %s: none)", cp.file, cp.policy.Name, noWarnings)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	c := newChecker(t)
	withParams := func(kind string) *admissionregistrationv1.ValidatingAdmissionPolicy {
		return &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: kind},
		}}
	}
	tests := []struct {
		name string
		p    *admissionregistrationv1.ValidatingAdmissionPolicy
		in   string
		want string
	}{
		{name: "upstream type name", in: "applied to '(Deployment123456.spec, int)'", want: "applied to '(Deployment.spec, int)'"},
		{name: "longest kind wins", in: "'PodTemplate42.template' and 'Pod7.spec'", want: "'PodTemplate.template' and 'Pod.spec'"},
		{name: "zero nanoseconds", in: "(Pod0.spec)", want: "(Pod.spec)"},
		{name: "unknown kind kept", in: "Foo123.spec", want: "Foo123.spec"},
		{name: "digits inside a word kept", in: "xPod123.spec Pod123abc", want: "xPod123.spec Pod123abc"},
		{name: "vapkit params name", p: withParams("Event"), in: "'(Event.note, EventParams.note)'", want: "'(Event.note, Event.note)'"},
		{name: "params name kept without paramKind", in: "EventParams.note", want: "EventParams.note"},
		{name: "other params name kept", p: withParams("ConfigMap"), in: "EventParams.note", want: "EventParams.note"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []admissionregistrationv1.ExpressionWarning{{FieldRef: "spec.validations[0].expression", Warning: tc.in}}
			got := c.Normalize(tc.p, in)
			if len(got) != 1 || got[0].Warning != tc.want || got[0].FieldRef != in[0].FieldRef {
				t.Errorf("Normalize(%q) = %v, want %q", tc.in, got, tc.want)
			}
			if in[0].Warning != tc.in {
				t.Errorf("Normalize modified its input: %q", in[0].Warning)
			}
		})
	}
	if got := c.Normalize(nil, nil); got != nil {
		t.Errorf("Normalize(nil, nil) = %v, want nil", got)
	}
}

func TestNilPolicy(t *testing.T) {
	c := newChecker(t)
	if got := c.Compare(nil); got.Diff != "" || got.Vapkit != nil || got.Upstream != nil {
		t.Errorf("Compare(nil) = %+v, want empty", got)
	}
}

// TestUpstreamReadsItsOwnDefinitions checks that the upstream side resolves
// the kinds served from outside k8s.io/api from the definitions their own
// modules generate (which carry descriptions; vapkit's embedded copy has
// none), so that the corpus compares vapkit's shipped schemas with
// upstream's.
func TestUpstreamReadsItsOwnDefinitions(t *testing.T) {
	c := newChecker(t)
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"},
	} {
		up, err := c.upstream.SchemaResolver.ResolveSchema(gvk)
		if err != nil {
			t.Fatalf("upstream ResolveSchema(%v) error: %v", gvk, err)
		}
		if up.Description == "" {
			t.Errorf("upstream ResolveSchema(%v) has no description: not the module's own definition", gvk)
		}
		vk, err := typecheck.BuiltinResolver().ResolveSchema(gvk)
		if err != nil {
			t.Fatalf("BuiltinResolver().ResolveSchema(%v) error: %v", gvk, err)
		}
		if got, want := sortedKeys(vk.Properties), sortedKeys(up.Properties); !reflect.DeepEqual(got, want) {
			t.Errorf("%v properties: vapkit %v, upstream %v", gvk, got, want)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
