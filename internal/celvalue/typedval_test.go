package celvalue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/internal/celvalue"
	"github.com/vapkit/vapkit/policy/manifest"
)

func ptrTo[T any](v T) *T { return &v }

// typedFixtures are typed objects covering the converter's special cases.
func typedFixtures() map[string]runtime.Object {
	ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	labels := map[string]string{"app": "web", "tier": "front", "a.b/c": "x"}
	container := corev1.Container{
		Name:  "app",
		Image: "registry.example/app:1.2",
		Ports: []corev1.ContainerPort{{ContainerPort: 8080, Name: "http", Protocol: corev1.ProtocolTCP}},
		Env:   []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.1")},
		},
		LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}, PeriodSeconds: 10},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
		SecurityContext: &corev1.SecurityContext{
			Privileged: ptrTo(false), RunAsNonRoot: ptrTo(true), RunAsUser: ptrTo(int64(1000)),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{}},
		},
	}
	podSpec := corev1.PodSpec{
		Containers:     []corev1.Container{container, {Name: "side", Image: "busybox"}},
		InitContainers: []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh", "-c", "true"}}},
		Volumes: []corev1.Volume{
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, DefaultMode: ptrTo(int32(0o644))}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptrTo(resource.MustParse("1Gi"))}}},
		},
		Tolerations:                   []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, TolerationSeconds: ptrTo(int64(30))}},
		NodeSelector:                  map[string]string{},
		HostNetwork:                   true,
		TerminationGracePeriodSeconds: ptrTo(int64(30)),
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}},
		}}},
		Overhead: corev1.ResourceList{},
	}
	meta := metav1.ObjectMeta{
		Name: "web", Namespace: "prod", UID: "1234", Generation: 3, ResourceVersion: "77",
		CreationTimestamp: ts, DeletionTimestamp: &ts, DeletionGracePeriodSeconds: ptrTo(int64(0)),
		Labels: labels, Annotations: map[string]string{"note": "ünïcödé ✓"},
		Finalizers:      []string{"f1"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "X", Name: "o", UID: "u", Controller: ptrTo(true)}},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, Time: &ts,
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{}}},"n":1.5}`)}}},
	}
	maxSurge := intstr.FromString("25%")
	maxUnavail := intstr.FromInt32(0)
	return map[string]runtime.Object{
		"deployment": &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{
				Replicas: ptrTo(int32(3)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavail}},
			},
			Status: appsv1.DeploymentStatus{Replicas: 3, Conditions: []appsv1.DeploymentCondition{{Type: "Available", Status: "True", LastUpdateTime: ts}}},
		},
		"pod": &corev1.Pod{ObjectMeta: meta, Spec: podSpec, Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &ts,
			PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}}}},
		"configmap": &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "cfg"},
			Data:       map[string]string{"a": "1", "b": ""},
			BinaryData: map[string][]byte{"bin": {0, 1, 2, 250}, "nil": nil, "empty": {}},
			Immutable:  ptrTo(false),
		},
		"secret": &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"k": []byte("v")}, StringData: map[string]string{}},
		"service": &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "svc"},
			Spec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{
					{Name: "http", Port: 80, TargetPort: intstr.FromString("http")},
					{Name: "raw", Port: 81, TargetPort: intstr.FromInt32(8081), NodePort: 30001},
					{Port: 82},
				},
				ClusterIPs: []string{"10.0.0.10"}, Type: corev1.ServiceTypeNodePort,
			},
		},
		"node": &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}},
			Spec:       corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: "t", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &ts}}},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), "example.com/gpu": resource.MustParse("1k")},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3800m")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: ts}},
				Images:      []corev1.ContainerImage{{Names: []string{"a", "b"}, SizeBytes: 123456789012}},
			},
		},
		"event": &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: "e"},
			EventTime:  metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)),
			Series:     &eventsv1.EventSeries{Count: 2, LastObservedTime: metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC))},
			Regarding:  corev1.ObjectReference{Kind: "Pod", Name: "p"},
		},
		"revision": &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Revision: 2,
			Data: runtime.RawExtension{Raw: []byte(`{"spec":{"x":[1,2.5,"s",null,true]}}`)}},
		"zero-deployment": &appsv1.Deployment{},
		"zero-pod":        &corev1.Pod{},
		"zero-configmap":  &corev1.ConfigMap{},
	}
}

// commonExprs apply to every object; pathExprs adds more per field.
var commonExprs = []string{
	"object", "oldObject", "object == oldObject", "object != oldObject",
	"size(object)", "type(object) == map", "type(object)", "object.kind", "object.apiVersion",
	"has(object.metadata)", "has(object.status)", "has(object.spec)", "has(object.foo)", "object.foo",
	"object.metadata", "object.metadata.name", "object.metadata.labels", "has(object.metadata.labels)",
	"object.map(k, k)", "object.filter(k, k.startsWith('s'))", "object.all(k, k != '')", "object.exists_one(k, k == 'metadata')",
	"object.metadata.map(k, k)", "object.metadata.all(k, object.metadata[k] != null)",
	"object.transformList(k, v, k)", "object.metadata.transformMap(k, v, v)",
	"object.all(k, v, k != '')", "object.exists(k, v, v == null)",
	"object == {}", "object.metadata == {'name': object.metadata.name}",
	"{'a': object.metadata}.a == object.metadata", "[object] == [oldObject]", "object in [oldObject]",
	"'metadata' in object", "1 in object", "object[1]", "object[1.0]", "object[true]",
	"dyn(object).metadata", "string(object)", "int(object)", "object + object",
	"object.?metadata.?name", "object.?nope.?x.orValue('d')", "optional.of(object).hasValue()",
	"object.metadata.?labels.orValue({}).size()",
	"has(object.metadata.name.x)", "object.metadata.name.x", "object.metadata.name[0]",
	"object.all(k, object[k] == oldObject[k])",
	"object.map(k, object[k]).size()", "object.map(k, type(object[k]))",
	"object.metadata.name.size() > 2 && object.metadata.name.startsWith('w')",
	"object.spec.containers + object.spec.containers", "object.spec.template.spec.containers + []",
	"[] + object.spec.template.spec.containers", "object.spec.template.spec.containers.size()",
	"object.spec.template.spec.containers.all(c, c.image.contains('/'))",
	"object.spec.template.spec.containers.map(c, c.name)",
	"object.spec.template.spec.containers.map(c, has(c.resources.limits) ? ['cpu' in c.resources.limits, 'gpu' in c.resources.limits, 1 in c.resources.limits] : [])",
	"object.spec.template.spec.containers.map(c, has(c.resources.limits) && 'memory' in c.resources.limits ? c.resources.limits.memory : '')",
	"object.spec.containers.map(c, c.resources.?limits.?cpu.orValue('none'))",
	"object.status.capacity.map(k, [k in object.status.capacity, object.status.capacity[k]])",
	"'app' in object.metadata.labels", "'nope' in object.metadata.labels", "1 in object.metadata.labels",
	"object.spec.template.spec.containers[0]", "object.spec.template.spec.containers[5]",
	"object.spec.template.spec.containers[-1]", "object.spec.template.spec.containers['a']",
	"object.spec.template.spec.containers.exists(c, has(c.securityContext) && c.securityContext.privileged == false)",
	"object.spec.template.spec.containers.all(c, c.resources.limits.all(k, quantity(c.resources.limits[k]).isGreaterThan(quantity('1m'))))",
	"object.spec.template.spec.containers[0].resources.limits.cpu", "object.spec.template.spec.containers[0].ports[0].containerPort + 1",
	"object.spec.template.spec.containers[0].livenessProbe.httpGet.port", "object.spec.strategy.rollingUpdate.maxSurge",
	"object.spec.strategy.rollingUpdate.maxUnavailable == 0", "object.spec.template.spec.containers[0].securityContext.capabilities",
	"object.spec.containers.map(c, c.name).join(',')", "object.spec.containers.filter(c, c.name != '')",
	"object.spec.containers[0].resources == oldObject.spec.containers[0].resources",
	"object.spec.template.spec.containers.sortBy(c, c.name)",
	"object.spec.replicas * 2", "object.spec.replicas > 1.5", "object.spec.selector.matchLabels == {'app': 'web', 'tier': 'front', 'a.b/c': 'x'}",
	"object.metadata.creationTimestamp", "timestamp(object.metadata.creationTimestamp) < timestamp('2030-01-01T00:00:00Z')",
	"object.metadata.managedFields[0].fieldsV1", "object.metadata.managedFields[0].fieldsV1.n",
	"object.metadata.ownerReferences.all(r, r.controller)", "object.metadata.annotations.note.size()",
	"object.data", "object.binaryData", "object.binaryData.bin", "object.binaryData['nil']", "object.binaryData.empty",
	"has(object.binaryData.nil)", "object.immutable", "object.data.b == ''", "base64.decode(object.binaryData.bin)",
	"object.spec.ports.map(p, p.targetPort)", "object.spec.ports.exists(p, p.targetPort == 'http')",
	"object.spec.ports.map(p, has(p.targetPort))", "object.spec.ports[2]", "object.spec.clusterIPs.exists(ip, isIP(ip))",
	"object.status.capacity", "object.status.capacity.all(k, quantity(object.status.capacity[k]).sign() > 0)",
	"object.status.images[0].sizeBytes", "object.status.allocatable == {'cpu': '3800m'}", "object.spec.taints[0].timeAdded",
	"object.eventTime", "object.series", "object.regarding", "object.data.spec.x", "object.data.spec.x[1] + 1.0",
	"object.revision", "object.spec.template.spec.nodeSelector", "has(object.spec.template.spec.nodeSelector)",
	"object.spec.template.spec.overhead", "object.spec.template.spec.volumes[1].emptyDir.sizeLimit",
	"object.status.conditions.exists(c, c.type == 'Available')", "object.status.startTime",
	"object.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values.isSorted()",
	"object.spec.template.spec.containers[0].env.map(e, e.?value.orValue(''))",
	"object.spec.template.spec.containers[0].env[1].valueFrom", "object.spec.template.spec.hostNetwork",
	"object.spec.template.spec.containers[0].resources.requests.cpu == '100m'",
	"object.metadata.labels.filter(k, k.contains('.')).map(k, object.metadata.labels[k]).join('')",
	"object.spec.template.spec.containers.map(c, c.name) == ['app', 'side']",
	"object.spec.template.spec.containers.indexOf(object.spec.template.spec.containers[1])",
	"object.spec.template.spec.containers[0] in object.spec.template.spec.containers",
	"'%s'.format([object.metadata.labels])", "'%s'.format([object.spec.template.spec.containers.map(c, c.name)])",
	"object.spec.template.spec.containers.map(c, c.resources)",
	"object.status.conditions.map(c, c.lastUpdateTime)",
}

// paths lists selector expressions for every field of m (two levels of
// list elements), escaping keys that are not identifiers.
func paths(prefix string, v any, depth int, out *[]string) {
	if depth > 12 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := prefix + "[" + strconv.Quote(k) + "]"
			if typedIdentRE.MatchString(k) {
				p = prefix + "." + k
				*out = append(*out, "has("+p+")")
			}
			*out = append(*out, p, "size("+p+")", p+" == "+p, "type("+p+")", strconv.Quote(k)+" in "+prefix)
			paths(p, x[k], depth+1, out)
		}
		*out = append(*out, prefix+".map(k, k)", prefix+".all(k, v, v != null)", prefix+" == oldObject", prefix+".exists(k, k == 'x')")
	case []any:
		for i := range min(len(x), 2) {
			p := prefix + "[" + strconv.Itoa(i) + "]"
			*out = append(*out, p, p+" in "+prefix)
			paths(p, x[i], depth+1, out)
		}
		*out = append(*out, prefix+".map(e, e)", prefix+".exists(e, e == null)", prefix+" + "+prefix, prefix+".all(i, e, i >= 0)")
	case string:
		*out = append(*out, prefix+".startsWith('a')", prefix+".matches('^[a-z]+$')", prefix+" + 'x'", prefix+" < 'm'")
	}
}

var typedIdentRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// native renders a CEL value as plain Go data, iterating maps and lists
// through the CEL interfaces.
func native(v ref.Val) any {
	switch x := v.(type) {
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		var keys []string
		for it.HasNext() == types.True {
			k := it.Next()
			keys = append(keys, fmt.Sprint(k.Value()))
			out[fmt.Sprint(k.Value())] = native(x.Get(k))
		}
		_ = keys // CEL-built maps iterate in random order: compare contents only
		out["<size>"] = x.Size()
		return out
	case traits.Lister:
		var out []any
		it := x.Iterator()
		for it.HasNext() == types.True {
			out = append(out, native(it.Next()))
		}
		return append(out, "<size>", x.Size())
	case nil:
		return nil
	}
	return fmt.Sprintf("%T %v", v, v.Value())
}

type evalOutcome struct {
	Value  any
	Type   string
	Err    string
	Cost   int64
	String string
}

func evalOne(t *testing.T, scope *celenv.Scope, p *celenv.Program, obj, old any) evalOutcome {
	t.Helper()
	b := scope.NewBatch(context.Background(), nil, &celenv.Input{Object: obj, OldObject: old}, runtimeBudget)
	r, err := b.Eval(p)
	if err != nil {
		return evalOutcome{Err: "batch: " + err.Error()}
	}
	out := evalOutcome{Cost: r.Cost}
	if r.Err != nil {
		out.Err = r.Err.Error()
		return out
	}
	out.Value = native(r.Value)
	out.Type = r.Value.Type().TypeName()
	switch r.Value.(type) {
	case traits.Mapper, traits.Lister:
	default:
		out.String = fmt.Sprint(r.Value)
	}
	return out
}

// TestTypedValueDifferential evaluates a battery of expressions over typed
// objects and requires TypedValue to give exactly what the converted map
// gives: value, error text and cost.
func TestTypedValueDifferential(t *testing.T) {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	progs := map[string]*celenv.Program{}
	compile := func(expr string) *celenv.Program {
		if p, ok := progs[expr]; ok {
			return p
		}
		p := scope.Compile(expr, celenv.Decls{})
		progs[expr] = p
		return p
	}
	fixtures := typedFixtures()
	local := len(fixtures)
	addCaseObjects(t, fixtures)
	if want := 50; objectStride() == 1 && len(fixtures) < local+want {
		t.Errorf("found %d typed objects in the case files, want at least %d", len(fixtures)-local, want)
	}
	names := make([]string, 0, len(fixtures))
	for n := range fixtures {
		names = append(names, n)
	}
	slices.Sort(names)
	checked := 0
	for _, name := range names {
		obj := fixtures[name]
		t.Run(name, func(t *testing.T) {
			m, err := builtin.ToUnstructured(obj)
			if err != nil {
				t.Fatalf("ToUnstructured: %v", err)
			}
			var exprs []string
			if !strings.HasPrefix(name, "case/") {
				exprs = slices.Clone(commonExprs)
			}
			var fields []string
			paths("object", m, 0, &fields)
			for i, e := range fields {
				// -short keeps every kind of expression over every
				// object, and a quarter of the fields.
				if i%sampleStride() == 0 {
					exprs = append(exprs, e)
				}
			}
			// shared is reused by every expression of the object, as a
			// request reuses its values across policies.
			shared := celvalue.TypedObject(obj, kindOf(m))
			fresh := func() any { return celvalue.TypedObject(obj, kindOf(m)) }
			asMap := func() any { return copyMap(m) }
			for _, expr := range exprs {
				p := compile(expr)
				if p.Err() != nil {
					continue
				}
				// Over fresh maps the result is the same in every mode.
				want := evalOne(t, scope, p, asMap(), asMap())
				for _, mode := range []struct {
					label    string
					obj, old func() any
				}{
					{"typed/typed", fresh, fresh},
					{"shared/shared", func() any { return shared }, func() any { return shared }},
					{"typed/map", fresh, asMap},
					{"map/typed", asMap, fresh},
				} {
					got := evalOne(t, scope, p, mode.obj(), mode.old())
					checked++
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s: Eval(%q) mismatch (-map +typed):\n%s", mode.label, expr, diff)
					}
				}
			}
		})
	}
	t.Logf("checked %d (mode, expression, object) triples over %d programs", checked, len(progs))
	if checked < 5000 {
		t.Errorf("checked %d (expression, object) pairs, want at least 5000", checked)
	}
}

// sampleStride and objectStride are 1 in full runs; with -short or the
// race detector, which slows CEL evaluation tenfold, the differential
// tests check one in four field expressions and one in eight case objects.
func sampleStride() int {
	if testing.Short() || raceEnabled {
		return 4
	}
	return 1
}

func objectStride() int {
	if testing.Short() || raceEnabled {
		return 8
	}
	return 1
}

// addCaseObjects adds the typed objects of the shared conformance cases:
// documents of built-in kinds and the objects of the AdmissionReviews.
func addCaseObjects(t *testing.T, into map[string]runtime.Object) {
	t.Helper()
	files, err := filepath.Glob("../../policy/testdata/cases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no case files: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		docs, err := manifest.DecodeFile(f)
		if err != nil {
			t.Fatalf("DecodeFile(%s): %v", f, err)
		}
		for _, d := range docs {
			name := fmt.Sprintf("case/%s#%d.%d", filepath.Base(f), d.Index, d.Item)
			objs := []runtime.Object{d.Object}
			if ar, ok := d.Object.(*admissionv1.AdmissionReview); ok && ar.Request != nil {
				for _, raw := range []runtime.RawExtension{ar.Request.Object, ar.Request.OldObject} {
					if len(raw.Raw) == 0 {
						continue
					}
					if o, err := builtin.DecodeJSON(raw.Raw); err == nil {
						objs = append(objs, o)
					}
				}
			}
			for i, o := range objs {
				if _, ok := o.(runtime.Unstructured); ok {
					continue
				}
				m, err := builtin.ToUnstructured(o)
				if err != nil {
					t.Fatalf("ToUnstructured(%s): %v", name, err)
				}
				key, err := json.Marshal(m)
				if err != nil {
					t.Fatalf("json.Marshal(%s): %v", name, err)
				}
				if seen[string(key)] || len(seen)%objectStride() != 0 {
					seen[string(key)] = true
					continue
				}
				seen[string(key)] = true
				into[fmt.Sprintf("%s/%d", name, i)] = o
			}
		}
	}
}

// kindOf returns the apiVersion and kind ToUnstructured added.
func kindOf(m map[string]any) map[string]string {
	set := map[string]string{}
	for _, k := range []string{"apiVersion", "kind"} {
		if s, ok := m[k].(string); ok {
			set[k] = s
		}
	}
	return set
}

func copyMap(m map[string]any) map[string]any { return runtime.DeepCopyJSON(m) }

// convTest exercises converter rules that k8s.io/api types do not use.
type ConvInner struct {
	X string `json:"x,omitempty"`
	Y int    `json:"y"`
}

type convNamed string

func (c convNamed) MarshalJSON() ([]byte, error) { return []byte(`"marshaled"`), nil }

type convTest struct {
	metav1.TypeMeta `json:",inline"`
	*ConvInner      `json:",inline"`
	Plain           string `json:"plain"`
	NoTag           int8
	Skip            string                        `json:"-"`
	Dup             string                        `json:"y,omitempty"`
	Uint            uint16                        `json:"uint"`
	Big             uint64                        `json:"big"`
	F32             float32                       `json:"f32"`
	Named           convNamed                     `json:"named"`
	NamedPtr        *convNamed                    `json:"namedPtr"`
	NamedList       []convNamed                   `json:"namedList"`
	Dur             metav1.Duration               `json:"dur"`
	NilMap          map[string]int                `json:"nilMap"`
	NilPtr          *int                          `json:"nilPtr"`
	NilSlice        []string                      `json:"nilSlice"`
	Bytes           []byte                        `json:"bytes"`
	Iface           any                           `json:"iface"`
	Zero            metav1.Time                   `json:"zero,omitzero"`
	Quantities      map[string]*resource.Quantity `json:"quantities"`
	IntOrStr        []intstr.IntOrString          `json:"intOrStr"`
}

func (c *convTest) DeepCopyObject() runtime.Object { d := *c; return &d }

func TestTypedValueConverterRules(t *testing.T) {
	q := resource.MustParse("2Gi")
	tests := []struct {
		name string
		obj  *convTest
	}{
		{name: "zero", obj: &convTest{}},
		{name: "full", obj: &convTest{
			TypeMeta: metav1.TypeMeta{Kind: "K"}, ConvInner: &ConvInner{X: "x", Y: 2}, Plain: "p", NoTag: -3, Skip: "s", Dup: "dup",
			Uint: 7, Big: 1 << 62, F32: 1.5, Named: "n", NamedPtr: ptrTo(convNamed("m")), NamedList: []convNamed{"a"},
			Dur: metav1.Duration{Duration: 90 * time.Second}, Bytes: []byte("hi"), Iface: map[string]any{"k": []any{int64(1)}},
			Zero: metav1.NewTime(time.Unix(5, 0)), Quantities: map[string]*resource.Quantity{"a": &q, "nil": nil},
			IntOrStr: []intstr.IntOrString{intstr.FromInt32(3), intstr.FromString("x")},
		}},
		{name: "inline-dup-omitted", obj: &convTest{ConvInner: &ConvInner{Y: 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			got := celvalue.TypedValue(tc.obj)
			wantVal := types.DefaultTypeAdapter.NativeToValue(want)
			if diff := cmp.Diff(native(wantVal), native(got)); diff != "" {
				t.Errorf("TypedValue(%+v) mismatch (-want +got):\n%s", tc.obj, diff)
			}
			if !reflect.DeepEqual(got.Value(), want) {
				t.Errorf("TypedValue(%+v).Value() = %v, want %v", tc.obj, got.Value(), want)
			}
		})
	}
}

func TestTypedValueOverflow(t *testing.T) {
	v := celvalue.TypedValue(&convTest{Big: 1 << 63})
	got := v.(traits.Mapper).Get(types.String("big"))
	const want = "unsigned value 9223372036854775808 does not fit into int64 (overflow)"
	if !types.IsError(got) || got.(*types.Err).Error() != want {
		t.Errorf("TypedValue(big).big = %v, want error %q", got, want)
	}
}

func TestTypedValueNil(t *testing.T) {
	tests := []struct {
		name string
		in   any
	}{
		{"nil", nil},
		{"nil pointer", (*corev1.Pod)(nil)},
		{"nil map", map[string]string(nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := celvalue.TypedValue(tc.in); got != types.NullValue {
				t.Errorf("TypedValue(%v) = %v, want null", tc.in, got)
			}
		})
	}
}

// checkReads reads every key of want's maps and every element of its
// lists from got through the CEL interfaces, in a shuffled order and then
// again (once converting, once cached), with near misses of each key, and
// requires what the converted map has.
func checkReads(t *testing.T, rnd *rand.Rand, path string, got ref.Val, want any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		m, ok := got.(traits.Mapper)
		if !ok {
			t.Fatalf("%s: got %T, want a map", path, got)
		}
		var keys []string
		for k := range w {
			keys = append(keys, k, k+"x", "x"+k, strings.ToUpper(k))
			if k != "" {
				keys = append(keys, k[:len(k)-1], k[:len(k)-1]+"\x00")
			}
		}
		keys = append(keys, "", "x")
		for range 2 {
			rnd.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			for _, k := range keys {
				v, found := m.Find(types.String(k))
				e, ok := w[k]
				if found != ok {
					t.Fatalf("%s: Find(%q) found %v, want %v", path, k, found, ok)
				}
				if ok {
					checkReads(t, rnd, path+"."+k, v, e)
				}
			}
		}
		if size := m.Size(); size != types.Int(len(w)) {
			t.Errorf("%s: size %v, want %d", path, size, len(w))
		}
	case []any:
		l, ok := got.(traits.Lister)
		if !ok {
			t.Fatalf("%s: got %T, want a list", path, got)
		}
		order := rnd.Perm(len(w))
		for range 2 {
			for _, i := range order {
				checkReads(t, rnd, fmt.Sprintf("%s[%d]", path, i), l.Get(types.Int(i)), w[i])
			}
			slices.Reverse(order)
		}
	default:
		wantVal := types.DefaultTypeAdapter.NativeToValue(want)
		if diff := cmp.Diff(native(wantVal), native(got)); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
		}
	}
}

// manyFields returns a pointer to a new struct with n string fields f0,
// f1, ..., the odd ones set.
func manyFields(n int) any {
	fields := make([]reflect.StructField, n)
	for i := range fields {
		fields[i] = reflect.StructField{
			Name: fmt.Sprintf("F%d", i),
			Type: reflect.TypeFor[string](),
			Tag:  reflect.StructTag(fmt.Sprintf(`json:"f%d,omitempty"`, i)),
		}
	}
	p := reflect.New(reflect.StructOf(fields))
	for i := 1; i < n; i += 2 {
		p.Elem().Field(i).SetString(fmt.Sprint(i))
	}
	return p.Interface()
}

// TestTypedValueReads reads objects whose maps and lists outgrow the
// caches TypedValue keeps inline, in random orders.
func TestTypedValueReads(t *testing.T) {
	data := map[string]string{}
	capacity := corev1.ResourceList{}
	for i := range 50 {
		data[fmt.Sprintf("key-%d", i)] = strconv.Itoa(i)
		capacity[corev1.ResourceName(fmt.Sprintf("example.com/r%d", i))] = *resource.NewQuantity(int64(i), resource.DecimalSI)
	}
	containers := make([]corev1.Container, 20)
	for i := range containers {
		containers[i] = corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "img", Args: []string{"a", "b"},
			Resources: corev1.ResourceRequirements{Limits: capacity}}
	}
	fixtures := typedFixtures()
	objects := map[string]any{
		"configmap":  &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: data}, Data: data},
		"node":       &corev1.Node{Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity}},
		"containers": &corev1.Pod{Spec: corev1.PodSpec{Containers: containers, InitContainers: containers[:9]}},
		"pod":        fixtures["pod"],
		"deployment": fixtures["deployment"],
		// More names than the perfect tables take.
		"struct-300": manyFields(300),
		"struct-40":  manyFields(40),
	}
	for name, obj := range objects {
		t.Run(name, func(t *testing.T) {
			want, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
			if err != nil {
				t.Fatal(err)
			}
			set := map[string]string{"kind": "K", "extra": "e"}
			got := celvalue.TypedObject(obj, set)
			want["kind"], want["extra"] = "K", "e"
			checkReads(t, rand.New(rand.NewPCG(1, 2)), "object", got, want)
			if !reflect.DeepEqual(got.Value(), want) {
				t.Errorf("TypedObject(%s).Value() differs from the converted map", name)
			}
		})
	}
}

func ExampleTypedValue() {
	env, err := celenv.New(celenv.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	scope := env.NewScope(celenv.ScopeOptions{})
	p := scope.Compile(
		"object.data.size() == 2 && object.binaryData.key == 'AAE=' && !has(object.metadata.labels)",
		celenv.Decls{}, cel.BoolType)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data:       map[string]string{"a": "1", "b": "2"},
		BinaryData: map[string][]byte{"key": {0, 1}},
	}
	in := &celenv.Input{Object: celvalue.TypedValue(cm)}
	r, err := scope.NewBatch(context.Background(), nil, in, runtimeBudget).Eval(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Value, r.Err)
	// Output: true <nil>
}
