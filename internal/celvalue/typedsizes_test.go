package celvalue

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// typedSizePaths are paths into a Deployment covering every shape the
// typed walk reads and the ones it leaves to the CEL form.
var typedSizePaths = [][]string{
	{"kind"}, {"apiVersion"}, {"apiVersion", "x"}, {"missing"}, {"missing", "@"},
	{"metadata", "name"}, {"metadata", "name", "x"}, {"metadata", "name", "@"},
	{"metadata", "labels"}, {"metadata", "labels", "@"}, {"metadata", "labels", "team"}, {"metadata", "labels", "nope"},
	{"metadata", "labels", "@", "x"}, {"metadata", "labels", "team", "x"},
	{"metadata", "annotations", "@"}, {"metadata", "creationTimestamp"}, {"metadata", "generation"},
	{"metadata", "ownerReferences", "@", "name"}, {"metadata", "finalizers", "@"},
	{"spec"}, {"spec", "replicas"}, {"spec", "replicas", "x"}, {"spec", "replicas", "@"},
	{"spec", "selector", "matchLabels", "@"}, {"spec", "selector", "matchExpressions", "@", "values", "@"},
	{"spec", "strategy", "rollingUpdate", "maxSurge"}, {"spec", "strategy", "type"},
	{"spec", "template", "metadata", "labels", "@"},
	{"spec", "template", "spec", "containers"}, {"spec", "template", "spec", "containers", "@"},
	{"spec", "template", "spec", "containers", "@", "image"}, {"spec", "template", "spec", "containers", "@", "name"},
	{"spec", "template", "spec", "containers", "@", "image", "@"},
	{"spec", "template", "spec", "containers", "@", "args", "@"},
	{"spec", "template", "spec", "containers", "@", "resources", "limits"},
	{"spec", "template", "spec", "containers", "@", "resources", "limits", "@"},
	{"spec", "template", "spec", "containers", "@", "resources", "limits", "cpu"},
	{"spec", "template", "spec", "containers", "@", "ports", "@", "containerPort"},
	{"spec", "template", "spec", "containers", "@", "env", "@", "name"},
	{"spec", "template", "spec", "containers", "@", "securityContext", "privileged"},
	{"spec", "template", "spec", "containers", "@", "livenessProbe", "httpGet", "port"},
	{"spec", "template", "spec", "initContainers"}, {"spec", "template", "spec", "initContainers", "@", "image"},
	{"spec", "template", "spec", "securityContext", "runAsNonRoot"}, {"spec", "template", "spec", "hostNetwork"},
	{"spec", "template", "spec", "volumes", "@", "configMap", "items", "@", "key"},
	{"spec", "template", "spec", "nodeSelector", "@"}, {"spec", "template", "spec", "nodeSelector", "zone"},
	{"status", "conditions", "@", "type"},
}

// celFormPaths are the paths of typedSizePaths left to the CEL form:
// custom converters, struct sizes, maps other than map[string]string.
var celFormPaths = [][]string{
	{"metadata", "creationTimestamp"}, {"spec"}, {"spec", "strategy", "rollingUpdate", "maxSurge"},
	{"spec", "template", "spec", "containers", "@"},
	{"spec", "template", "spec", "containers", "@", "resources", "limits", "@"},
	{"spec", "template", "spec", "containers", "@", "resources", "limits", "cpu"},
	{"spec", "template", "spec", "containers", "@", "livenessProbe", "httpGet", "port"},
}

// typedSizeDeployments are Deployments with the shapes typedSizePaths
// reach: empty and nil lists and maps, nil pointers, custom converters.
func typedSizeDeployments() []*appsv1.Deployment {
	no, yes := false, true
	replicas := int32(3)
	full := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", Generation: 4,
			Labels:            map[string]string{"app": "web", "team": "payments-and-billing"},
			Annotations:       map[string]string{"note": strings.Repeat("n", 70)},
			CreationTimestamp: metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location()),
			Finalizers:        []string{"a", "bbbbbbbbbbbbbbbbbbb"},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "In", Values: []string{"frontend", "backend-long-name"}}}},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &intstr.IntOrString{Type: intstr.String, StrVal: "25%"}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "frontend"}},
				Spec: corev1.PodSpec{
					NodeSelector:    map[string]string{"zone": "eu-west-1a"},
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes},
					Containers: []corev1.Container{
						{Name: "web", Image: "registry.example.com/web:1.2.3", Args: []string{"--port", "8080"},
							Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
								corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")}},
							Ports:           []corev1.ContainerPort{{ContainerPort: 8080}},
							Env:             []corev1.EnvVar{{Name: "MODE", Value: "prod"}},
							SecurityContext: &corev1.SecurityContext{Privileged: &no},
							LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
								HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}},
						},
						{Name: "sidecar-with-a-longer-name", Image: "registry.example.com/sidecar@sha256:" + strings.Repeat("0", 64)},
					},
					InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
					Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						Items: []corev1.KeyToPath{{Key: "settings.yaml", Path: "s"}}}}}},
				},
			},
		},
		Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable}}},
	}
	empty := &appsv1.Deployment{}
	emptyLists := full.DeepCopy()
	emptyLists.Labels = map[string]string{}
	emptyLists.Spec.Template.Spec.Containers = []corev1.Container{}
	emptyLists.Spec.Template.Spec.NodeSelector = map[string]string{}
	emptyLists.Spec.Selector.MatchExpressions[0].Values = []string{}
	emptyLists.Spec.Template.Spec.SecurityContext = nil
	return []*appsv1.Deployment{full, empty, emptyLists}
}

// TestTypedSizesMatchCEL checks that every path the typed walk sizes gets
// the answer sizesAt gives on the CEL form, and that PathBound (typed
// where it can) agrees with sizing the CEL form alone.
func TestTypedSizesMatchCEL(t *testing.T) {
	var table PathTable
	set := map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"}
	for di, d := range typedSizeDeployments() {
		for _, withSet := range []bool{false, true} {
			s := set
			if !withSet {
				s = nil
			}
			var sizes Sizes
			typedObj := TypedObject(d, s)
			for _, fields := range typedSizePaths {
				path := table.Intern(1, fields)
				// The CEL form, fresh so that no typed walk shares it.
				wantB, wantOK := sizesAt(TypedObject(d, s), path, 0)
				b, ok, done := typedPathSizes(path, typedObj)
				if done && (ok != wantOK || (ok && b != wantB)) {
					t.Errorf("deployment %d, set %v, %v: typed walk = %d, %v; CEL form %d, %v", di, withSet, fields, b, ok, wantB, wantOK)
				}
				if sized := !slices.ContainsFunc(celFormPaths, func(f []string) bool { return slices.Equal(f, fields) }); done != sized && !(withSet && set[fields[0]] != "") {
					t.Errorf("deployment %d, set %v, %v: sized in place %v, want %v", di, withSet, fields, done, sized)
				}
				want := PathBound0(path, TypedObject(d, s))
				if got := sizes.PathBound(path, typedObj); got != want {
					t.Errorf("deployment %d, set %v, %v: PathBound = %d, want %d", di, withSet, fields, got, want)
				}
			}
			sizes.Reset()
		}
	}
}

// PathBound0 is PathBound on the CEL form of root only, without memo.
func PathBound0(path *Path, root any) uint64 {
	root = Resolve(root)
	b, ok := sizesAt(root, path, 0)
	if !ok {
		return SizeBound(root)
	}
	return b
}

// TestTypedSizesNoAllocs checks that sizing the paths of the pod spec
// expressions most policies have converts nothing.
func TestTypedSizesNoAllocs(t *testing.T) {
	var table PathTable
	d := typedSizeDeployments()[0]
	obj := TypedObject(d, map[string]string{"apiVersion": "apps/v1", "kind": "Deployment"})
	paths := []*Path{
		table.Intern(1, []string{"spec", "template", "spec", "containers"}),
		table.Intern(1, []string{"spec", "template", "spec", "containers", "@", "image"}),
		table.Intern(1, []string{"metadata", "name"}),
		table.Intern(1, []string{"metadata", "labels", "team"}),
	}
	var sizes Sizes
	allocs := testing.AllocsPerRun(100, func() {
		for _, p := range paths {
			sizes.PathBound(p, obj)
		}
		sizes.Reset()
	})
	if allocs != 0 {
		t.Errorf("PathBound allocates %v times, want 0", allocs)
	}
}

// FuzzTypedSizes checks the typed walk against the CEL form on decoded
// Deployments.
func FuzzTypedSizes(f *testing.F) {
	for _, d := range typedSizeDeployments() {
		data, err := json.Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(0))
		f.Add(data, uint8(29))
	}
	f.Add([]byte(`{"spec":{"template":{"spec":{"containers":[null,{"image":""}]}}}}`), uint8(30))
	f.Add([]byte(`{"metadata":{"labels":null,"annotations":{"":""}}}`), uint8(14))
	var table PathTable
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		var d appsv1.Deployment
		if err := json.Unmarshal(data, &d); err != nil {
			return
		}
		fields := typedSizePaths[int(which)%len(typedSizePaths)]
		path := table.Intern(1, fields)
		wantB, wantOK := sizesAt(TypedValue(&d), path, 0)
		if b, ok, done := typedPathSizes(path, TypedValue(&d)); done && (ok != wantOK || (ok && b != wantB)) {
			t.Errorf("%s, %v: typed walk = %d, %v; CEL form %d, %v", data, fields, b, ok, wantB, wantOK)
		}
	})
}
