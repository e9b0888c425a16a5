package mutationdiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/mutation"
	"github.com/vapkit/vapkit/internal/patchtypes"
)

// testCase is one entry of testdata/cases.yaml.
type testCase struct {
	Name   string `json:"name"`
	Object string `json:"object"`
	Type   string `json:"type"`
	Expr   string `json:"expr"`
}

// outcome is what one side produced: the mutated object as JSON, or the
// error text and, for API status errors, the code.
type outcome struct {
	Object string
	Err    string
	Code   int32
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// object decodes the named fixture: typed for built-in kinds, unstructured
// otherwise.
func object(t *testing.T, objs map[string]json.RawMessage, name string) (runtime.Object, schema.GroupVersionKind) {
	t.Helper()
	raw, ok := objs[name]
	if !ok {
		t.Fatalf("no object %q", name)
	}
	obj, err := builtin.DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	return obj, obj.GetObjectKind().GroupVersionKind()
}

func TestMutationDiff(t *testing.T) {
	var cases []testCase
	readYAML(t, "testdata/cases.yaml", &cases)
	var objs map[string]json.RawMessage
	readYAML(t, "testdata/objects.yaml", &objs)
	if len(cases) < 40 {
		t.Fatalf("%d cases, want at least 40", len(cases))
	}
	divergences := 0
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			up := runUpstream(t, tc, objs)
			ours := runVapkit(t, tc, objs)
			if testing.Verbose() {
				t.Logf("%+v", up)
			}
			if diff := cmp.Diff(up, ours); diff != "" {
				divergences++
				t.Errorf("%s: %s\n(-upstream +vapkit):\n%s", tc.Type, tc.Expr, diff)
			}
		})
	}
	t.Logf("%d cases, %d divergences", len(cases), divergences)
}

func render(t *testing.T, obj runtime.Object, err error) outcome {
	t.Helper()
	if err != nil {
		o := outcome{Err: sortAtomics(err.Error())}
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			o.Code = se.Status().Code
		}
		return o
	}
	m, err := builtin.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return outcome{Object: string(b)}
}

// runUpstream runs upstream's patcher as the mutating dispatcher does.
func runUpstream(t *testing.T, tc testCase, objs map[string]json.RawMessage) outcome {
	t.Helper()
	obj, gvk := object(t, objs, tc.Object)
	scheme := builtin.Scheme()
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	opts := plugincel.OptionalVariableDeclarations{HasAuthorizer: true, HasPatchTypes: true}
	var p patch.Patcher
	switch tc.Type {
	case "JSONPatch":
		p = patch.NewJSONPatcher(compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: tc.Expr}, opts, environment.StoredExpressions))
	case "ApplyConfiguration":
		p = patch.NewApplyConfigurationPatcher(compiler.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: tc.Expr}, opts, environment.StoredExpressions))
	default:
		t.Fatalf("unknown type %q", tc.Type)
	}
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: "things"}
	acc := obj.(metav1.Object)
	attrs := admission.NewAttributesRecord(obj, nil, gvk, acc.GetNamespace(), acc.GetName(), gvr, "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{})
	va := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedObject: admission.NewLazyObject(obj)}
	out, err := p.Patch(context.Background(), patch.Request{
		MatchedResource:     gvr,
		VersionedAttributes: va,
		ObjectInterfaces:    admission.NewObjectInterfacesFromScheme(scheme),
		TypeConverter:       applyconfigurations.NewTypeConverter(scheme),
	}, celconfig.RuntimeCELCostBudget)
	if err == nil {
		// dispatchOne's conversion back to the typed object.
		if _, ok := obj.(*unstructured.Unstructured); !ok {
			out, err = scheme.ConvertToVersion(out, gvk.GroupVersion())
		}
	}
	return render(t, out, err)
}

// runVapkit runs the same mutation through celenv and internal/mutation.
func runVapkit(t *testing.T, tc testCase, objs map[string]json.RawMessage) outcome {
	t.Helper()
	obj, gvk := object(t, objs, tc.Object)
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := patchtypes.JSONPatchListType
	if tc.Type == "ApplyConfiguration" {
		want = patchtypes.ObjectType
	}
	s := env.NewScope(celenv.ScopeOptions{})
	p := s.Compile(tc.Expr, celenv.Decls{Authorizer: true, PatchTypes: true}, want)
	if p.Err() != nil {
		return outcome{Err: p.Err().Detail}
	}
	u, err := builtin.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch(context.Background(), nil, &celenv.Input{Object: u}, runtimeBudget)
	r, err := b.Eval(p)
	if err != nil {
		return outcome{Err: err.Error()}
	}
	if r.Err != nil {
		return outcome{Err: r.Err.Error()}
	}
	switch tc.Type {
	case "JSONPatch":
		jp, err := mutation.BuildJSONPatch(r.Value)
		if err != nil {
			return render(t, nil, err)
		}
		out, err := mutation.ApplyJSONPatch(jp, obj, gvk)
		if err == nil {
			out, err = mutation.Typed(out, obj, gvk.GroupVersion())
		}
		return render(t, out, err)
	default:
		conv, err := mutation.Builtin()
		if err != nil {
			t.Fatal(err)
		}
		ov, ok := r.Value.(*patchtypes.ObjectVal)
		if !ok {
			return outcome{Err: fmt.Sprintf("unsupported return type from ApplyConfiguration expression: %v", r.Value.Type())}
		}
		out, err := mutation.Apply(conv, obj, ov)
		if err != nil {
			return render(t, nil, err)
		}
		typed, err := mutation.Typed(out, obj, gvk.GroupVersion())
		return render(t, typed, err)
	}
}

// atomicsPrefix starts the list of atomic paths in an apply configuration
// error. Upstream lists them in Go map order, so the diff compares them as
// a set; vapkit sorts them.
const atomicsPrefix = "may not mutate atomic arrays, maps or structs: "

func sortAtomics(msg string) string {
	head, list, ok := strings.Cut(msg, atomicsPrefix)
	if !ok {
		return msg
	}
	paths := strings.Split(list, ", ")
	slices.Sort(paths)
	return head + atomicsPrefix + strings.Join(paths, ", ")
}
