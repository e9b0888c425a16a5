package celenv

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/internal/celvalue"
)

// typedPathExprs are read by the typed path tests: plain paths, absent
// fields, maps, lists, presence tests, optionals, indexes, comprehension
// variables, shadowed and dotted variables, conversion errors.
var typedPathExprs = []string{
	"object.metadata.name",
	"object.kind + ' ' + object.apiVersion",
	"object.metadata.labels.app",
	"object.metadata.labels.missing",
	"object.metadata.annotations",
	"object.metadata.annotations.x",
	"object.metadata.name.size()",
	"object.metadata.name.foo",
	"has(object.metadata.name.foo)",
	"object.spec.replicas",
	"object.spec.paused",
	"object.spec.nosuch",
	"object.spec.strategy",
	"object.status",
	"object.status.replicas",
	"object.spec.template.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
	"object.spec.template.spec.containers.all(c, c.image.contains(':') && !c.image.endsWith(':latest'))",
	"!has(object.spec.template.spec.initContainers) || object.spec.template.spec.initContainers.all(c, c.image.startsWith('r'))",
	"object.spec.template.spec.containers.map(c, c.name)",
	"object.spec.template.spec.containers.exists(c, c.securityContext.privileged)",
	"object.spec.template.spec.containers.all(c, !has(c.securityContext) || !has(c.securityContext.privileged) || !c.securityContext.privileged)",
	"object.spec.template.spec.containers.all(c, has(c.resources.limits) && 'cpu' in c.resources.limits && c.resources.limits.cpu != '')",
	"object.spec.template.spec.containers.map(c, c.resources.limits.memory)",
	"object.spec.template.spec.containers.map(c, c.ports.map(p, p.containerPort))",
	"object.spec.template.spec.containers[0].image",
	"object.spec.template.spec.containers[5].image",
	"object.spec.template.spec.containers[0].nosuch",
	"has(object.spec.template.spec.containers[0].securityContext)",
	"object.spec.template.spec.containers.filter(c, has(c.securityContext)).size()",
	"has(object.spec)",
	"has(object.spec.template.spec.hostNetwork)",
	"has(object.nosuch.x)",
	"has(object.metadata.labels)",
	"has(object.metadata.labels.app)",
	"object.?spec.replicas.orValue(7)",
	"object.spec.?paused.orValue(false)",
	"object.?nosuch.?x.orValue('none')",
	"object.spec.template.spec.containers.all(c, c.?image.orValue('') != '')",
	"object.metadata.labels['app']",
	"object.metadata['name']",
	"[object].exists(object, object.metadata.name == 'web')",
	"[1].exists(object, .object.metadata.name == 'web')",
	"[{'spec': {'x': 1}}].all(object, object.spec.x == 1)",
	"object.spec.template.spec.containers.exists(c, [c].exists(c, c.name == 'web'))",
	"oldObject.metadata.name",
	"has(oldObject.metadata)",
	"oldObject == null",
	"object.big",
	"has(object.big)",
	"object.inner.big",
	"object.ok",
	"object.nested.ok",
	"params.data.registry",
	"params.data.missing",
	"has(params.data.registry)",
	"params.metadata.name",
	"namespaceObject.metadata.name",
	"namespaceObject.metadata.labels.tenant",
	"request.operation",
	"request.userInfo.username",
	"object == object",
	"object.spec.template.spec.containers == object.spec.template.spec.containers",
	"object.spec.template.spec.containers.all(x, object.spec.template.spec.containers.exists(y, x.name == y.name))",
	"object.spec.template.spec.containers.all(c, c.image.startsWith(params.data.registry))",
	"object.spec.template.spec.containers.exists_one(c, c.name == 'web')",
	"object.spec.template.spec.containers.all(i, c, c.name != '')",
	"object.metadata.labels.all(k, v, k != '' && v != '')",
	"object.spec.selector.matchLabels.app",
	"object.spec.template.metadata.labels.exists(k, k == 'app')",
}

// overflowing is a struct whose fields fail to convert: CEL has no
// unsigned integers above math.MaxInt64.
type overflowing struct {
	Big    uint64       `json:"big"`
	Inner  *overflowing `json:"inner,omitempty"`
	OK     bool         `json:"ok"`
	Nested *overflowing `json:"nested,omitempty"`
}

// typedPathInputs returns the inputs of the typed path tests: typed
// objects, their unstructured forms and odd ones.
func typedPathInputs(t testing.TB) map[string]func() *Input {
	replicas := int32(3)
	privileged := true
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "frontend"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "web", Image: "registry.example.com/web:1.4.2",
						Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("500m")}}},
					{Name: "side", Image: "other.example.com/side:latest",
						SecurityContext: &corev1.SecurityContext{Privileged: &privileged}},
				}},
			},
		},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Data: map[string]string{"registry": "registry.example.com/"}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"tenant": "shop"}}}
	bad := &overflowing{Big: math.MaxUint64, OK: true, Inner: &overflowing{Big: math.MaxUint64}, Nested: &overflowing{OK: true}}
	set := map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"}
	request := map[string]any{"operation": "CREATE", "userInfo": map[string]any{"username": "alice"}}
	return map[string]func() *Input{
		"typed": func() *Input {
			return &Input{Object: celvalue.TypedObject(d, set), Params: celvalue.TypedValue(cm),
				Namespace: celvalue.TypedValue(ns), Request: request}
		},
		"typed-update": func() *Input {
			return &Input{Object: celvalue.TypedObject(d, set), OldObject: celvalue.TypedObject(d, set), Params: celvalue.TypedValue(cm)}
		},
		"unstructured": func() *Input {
			return &Input{Object: u, Params: map[string]any{"data": map[string]any{"registry": "r"}}, Request: request}
		},
		"overflowing": func() *Input { return &Input{Object: celvalue.TypedValue(bad)} },
		"lazy": func() *Input {
			return &Input{Object: celvalue.Lazy(func() any { return celvalue.TypedObject(d, set) })}
		},
	}
}

// typedPathPrograms compiles expr with and without typed paths, as the
// untracked programs are built; ok is false when expr does not compile.
func typedPathPrograms(t testing.TB, env *cel.Env, expr string) (plain, typed cel.Program, ok bool) {
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, nil, false
	}
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(checkFrequency)}
	plain, err := env.Program(ast, opts...)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	if o := typedPathOption(ast); o != nil {
		opts = append(opts, o)
	}
	typed, err = env.Program(ast, opts...)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return plain, typed, true
}

// outcome renders a program's value and error, types included.
func outcome(prog cel.Program, in *Input) string {
	val, _, err := prog.Eval(&activation{in: in})
	node := int64(0)
	if e, ok := val.(*types.Err); ok {
		node = e.NodeID()
	}
	return fmt.Sprintf("%T %v | %v at node %d", val, val, err, node)
}

// typedPathEnv is the environment of the typed path tests, with params.
func typedPathEnv(t testing.TB) *cel.Env {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	env, err := e.NewScope(ScopeOptions{Params: true}).celEnv(false)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestTypedPathsMatchPlanner evaluates every expression with and without
// typed paths on every input, on fresh values and on values the other
// program read first: values and errors must be the same.
func TestTypedPathsMatchPlanner(t *testing.T) {
	if plannerNodes() == nil {
		t.Fatal("cel-go's planner types were not recognised: typed paths are off")
	}
	env := typedPathEnv(t)
	inputs := typedPathInputs(t)
	for _, expr := range typedPathExprs {
		plain, typed, ok := typedPathPrograms(t, env, expr)
		if !ok {
			t.Fatalf("%s does not compile", expr)
		}
		for name, input := range inputs {
			want := outcome(plain, input())
			if got := outcome(typed, input()); got != want {
				t.Errorf("%s on %s, fresh:\n got %s\nwant %s", expr, name, got, want)
			}
			shared := input()
			first := outcome(typed, shared)
			if first != want || outcome(plain, shared) != want || outcome(typed, shared) != want {
				t.Errorf("%s on %s, shared: typed first %s, want %s", expr, name, first, want)
			}
		}
	}
}

// TestTypedPathsDecorate checks that the programs of reads on typed
// values do use typed paths, and that a dotted variable leaves them out.
func TestTypedPathsDecorate(t *testing.T) {
	env := typedPathEnv(t)
	for expr, want := range map[string]bool{
		"object.spec.replicas": true,
		"has(object.spec)":     true,
		"[1].exists(object, .object.metadata.name == 'x')": false,
	} {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatal(iss.Err())
		}
		if got := typedPathOption(ast) != nil; got != want {
			t.Errorf("%s: typed paths %v, want %v", expr, got, want)
		}
	}
	var nodes []string
	count := func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		nodes = append(nodes, fmt.Sprintf("%T", i))
		return i, nil
	}
	ast, _ := env.Compile("has(object.spec.x) && object.spec.template.spec.containers.all(c, c.image != '')")
	if _, err := env.Program(ast, cel.CustomDecoratorV2(decorateTypedPaths), cel.CustomDecoratorV2(count)); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(nodes, " ")
	for _, want := range []string{"*celenv.pathNode", "*celenv.presenceNode"} {
		if !strings.Contains(joined, want) {
			t.Errorf("planned nodes %s: no %s", joined, want)
		}
	}
}

// fuzzPathFields are the field names FuzzTypedPaths selects.
var fuzzPathFields = [...]string{
	"spec", "template", "containers", "metadata", "labels", "name", "image", "app",
	"replicas", "big", "inner", "nosuch", "securityContext", "privileged", "data", "registry",
	"resources", "limits", "cpu", "ports", "containerPort", "ok", "nested", "annotations",
}

// fuzzPathExpr turns data into an expression reading a path: the first
// byte chooses the root and the form (the value, a presence test, the
// path in a comprehension over the containers), each other one a field
// selection, an optional selection or an index.
func fuzzPathExpr(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	roots := [...]string{"object", "oldObject", "params", "namespaceObject", "request", "c"}
	root := roots[int(data[0])%len(roots)]
	var sb strings.Builder
	sb.WriteString("ROOT")
	for _, b := range data[1:] {
		f := fuzzPathFields[int(b/8)%len(fuzzPathFields)]
		switch b % 8 {
		case 0:
			sb.WriteString("[0]")
		case 1:
			sb.WriteString(".?" + f)
		case 2:
			sb.WriteString("['" + f + "']")
		default:
			sb.WriteString("." + f)
		}
	}
	path := sb.String()
	switch (int(data[0]) / len(roots)) % 3 {
	case 1:
		path = "has(" + path + ")"
	case 2:
		path = "[" + path + "].exists(x, x != null)"
	}
	// Inside the comprehension the path reads root; outside, c is not
	// declared and the path reads object instead.
	inner := strings.ReplaceAll(path, "ROOT", root)
	if root == "c" {
		root = "object"
	}
	return "object.spec.template.spec.containers.exists(c, c.name == 'side' && (" + inner + ") == (" + inner + "))" +
		" || " + strings.ReplaceAll(path, "ROOT", root)
}

// FuzzTypedPaths compares programs with and without typed paths on
// expressions built from the fuzz input, on every input of the typed path
// tests: values and errors must be the same.
func FuzzTypedPaths(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 3, 11, 19, 27}, {6, 4 + 8*6}, {12, 3 + 8*3, 3 + 8*4, 3 + 8*7}, {1, 3 + 8*3}, {2, 3 + 8*14, 3 + 8*15},
		{5, 3 + 8*16, 3 + 8*17, 3 + 8*18}, {0, 3 + 8*9}, {0, 3 + 8*10, 3 + 8*9}, {8, 3 + 8*11, 1 + 8*5},
		{17, 3 + 8*19, 0, 3 + 8*20}, {0, 2 + 8*3, 2 + 8*7},
	} {
		f.Add(seed)
	}
	env := typedPathEnv(f)
	inputs := typedPathInputs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 12 {
			return
		}
		expr := fuzzPathExpr(data)
		plain, typed, ok := typedPathPrograms(t, env, expr)
		if !ok {
			return
		}
		if testing.Verbose() {
			t.Log(expr)
		}
		for name, input := range inputs {
			shared := input()
			want := outcome(plain, input())
			if got := outcome(typed, shared); got != want {
				t.Errorf("%s on %s:\n got %s\nwant %s", expr, name, got, want)
			}
		}
	})
}
