// Package metadatadiff compares vapkit's validation of built-in objects'
// metadata (typecheck.ValidateBuiltinMetadata) with kube-apiserver 1.37's:
// the create validation of each kind in k8s.io/kubernetes v1.37.2
// pkg/apis/*/validation, called on the object converted to its internal
// type through the legacy scheme, keeping only the errors whose field path
// is under metadata.
package metadatadiff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	autoscalingvalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	"k8s.io/kubernetes/pkg/apis/coordination"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	coordinationvalidation "k8s.io/kubernetes/pkg/apis/coordination/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/discovery"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	discoveryvalidation "k8s.io/kubernetes/pkg/apis/discovery/validation"
	"k8s.io/kubernetes/pkg/apis/networking"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	networkingvalidation "k8s.io/kubernetes/pkg/apis/networking/validation"
	"k8s.io/kubernetes/pkg/apis/rbac"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	rbacvalidation "k8s.io/kubernetes/pkg/apis/rbac/validation"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	schedulingvalidation "k8s.io/kubernetes/pkg/apis/scheduling/validation"
	"k8s.io/kubernetes/pkg/apis/storage"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"

	"github.com/vapkit/vapkit/typecheck"
)

// kinds are the kinds judged, with kube's create validation of each.
var kinds = []struct {
	gvk      schema.GroupVersionKind
	validate func(runtime.Object) field.ErrorList
}{
	{gv("", "v1", "Pod"), func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidatePodCreate(o.(*core.Pod), corevalidation.PodValidationOptions{})
	}},
	{gv("", "v1", "Service"), func(o runtime.Object) field.ErrorList { return corevalidation.ValidateServiceCreate(o.(*core.Service)) }},
	{gv("", "v1", "Namespace"), func(o runtime.Object) field.ErrorList { return corevalidation.ValidateNamespace(o.(*core.Namespace)) }},
	{gv("", "v1", "ConfigMap"), func(o runtime.Object) field.ErrorList { return corevalidation.ValidateConfigMap(o.(*core.ConfigMap)) }},
	{gv("", "v1", "Secret"), func(o runtime.Object) field.ErrorList { return corevalidation.ValidateSecret(o.(*core.Secret)) }},
	{gv("", "v1", "ServiceAccount"), func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateServiceAccount(o.(*core.ServiceAccount))
	}},
	{gv("", "v1", "PersistentVolumeClaim"), func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidatePersistentVolumeClaim(o.(*core.PersistentVolumeClaim), corevalidation.PersistentVolumeClaimSpecValidationOptions{})
	}},
	{gv("", "v1", "PersistentVolume"), func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidatePersistentVolume(o.(*core.PersistentVolume), corevalidation.PersistentVolumeSpecValidationOptions{})
	}},
	{gv("", "v1", "LimitRange"), func(o runtime.Object) field.ErrorList { return corevalidation.ValidateLimitRange(o.(*core.LimitRange)) }},
	{gv("", "v1", "ResourceQuota"), func(o runtime.Object) field.ErrorList {
		return corevalidation.ValidateResourceQuota(o.(*core.ResourceQuota))
	}},
	{gv("apps", "v1", "Deployment"), func(o runtime.Object) field.ErrorList {
		return appsvalidation.ValidateDeployment(o.(*apps.Deployment), corevalidation.PodValidationOptions{})
	}},
	{gv("apps", "v1", "ReplicaSet"), func(o runtime.Object) field.ErrorList {
		return appsvalidation.ValidateReplicaSet(o.(*apps.ReplicaSet), corevalidation.PodValidationOptions{})
	}},
	{gv("apps", "v1", "DaemonSet"), func(o runtime.Object) field.ErrorList {
		return appsvalidation.ValidateDaemonSet(o.(*apps.DaemonSet), corevalidation.PodValidationOptions{})
	}},
	{gv("apps", "v1", "StatefulSet"), func(o runtime.Object) field.ErrorList {
		return appsvalidation.ValidateStatefulSet(o.(*apps.StatefulSet), appsvalidation.StatefulSetValidationOptions{}, corevalidation.PodValidationOptions{})
	}},
	{gv("apps", "v1", "ControllerRevision"), func(o runtime.Object) field.ErrorList {
		return appsvalidation.ValidateControllerRevisionCreate(o.(*apps.ControllerRevision))
	}},
	{gv("batch", "v1", "Job"), func(o runtime.Object) field.ErrorList {
		return batchvalidation.ValidateJobCreate(o.(*batch.Job), batchvalidation.JobValidationOptions{})
	}},
	{gv("batch", "v1", "CronJob"), func(o runtime.Object) field.ErrorList {
		return batchvalidation.ValidateCronJobCreate(o.(*batch.CronJob), corevalidation.PodValidationOptions{})
	}},
	{gv("rbac.authorization.k8s.io", "v1", "Role"), func(o runtime.Object) field.ErrorList { return rbacvalidation.ValidateRole(o.(*rbac.Role)) }},
	{gv("rbac.authorization.k8s.io", "v1", "ClusterRole"), func(o runtime.Object) field.ErrorList {
		return rbacvalidation.ValidateClusterRole(o.(*rbac.ClusterRole), rbacvalidation.ClusterRoleValidationOptions{})
	}},
	{gv("rbac.authorization.k8s.io", "v1", "RoleBinding"), func(o runtime.Object) field.ErrorList {
		return rbacvalidation.ValidateRoleBinding(o.(*rbac.RoleBinding))
	}},
	{gv("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"), func(o runtime.Object) field.ErrorList {
		return rbacvalidation.ValidateClusterRoleBinding(o.(*rbac.ClusterRoleBinding))
	}},
	{gv("networking.k8s.io", "v1", "Ingress"), func(o runtime.Object) field.ErrorList {
		return networkingvalidation.ValidateIngressCreate(o.(*networking.Ingress))
	}},
	{gv("networking.k8s.io", "v1", "IngressClass"), func(o runtime.Object) field.ErrorList {
		return networkingvalidation.ValidateIngressClass(o.(*networking.IngressClass))
	}},
	{gv("networking.k8s.io", "v1", "NetworkPolicy"), func(o runtime.Object) field.ErrorList {
		return networkingvalidation.ValidateNetworkPolicy(o.(*networking.NetworkPolicy), networkingvalidation.NetworkPolicyValidationOptions{})
	}},
	{gv("autoscaling", "v2", "HorizontalPodAutoscaler"), func(o runtime.Object) field.ErrorList {
		return autoscalingvalidation.ValidateHorizontalPodAutoscaler(o.(*autoscaling.HorizontalPodAutoscaler), autoscalingvalidation.HorizontalPodAutoscalerSpecValidationOptions{})
	}},
	{gv("scheduling.k8s.io", "v1", "PriorityClass"), func(o runtime.Object) field.ErrorList {
		return schedulingvalidation.ValidatePriorityClass(o.(*scheduling.PriorityClass))
	}},
	{gv("storage.k8s.io", "v1", "StorageClass"), func(o runtime.Object) field.ErrorList {
		return storagevalidation.ValidateStorageClass(o.(*storage.StorageClass))
	}},
	{gv("discovery.k8s.io", "v1", "EndpointSlice"), func(o runtime.Object) field.ErrorList {
		return discoveryvalidation.ValidateEndpointSliceCreate(o.(*discovery.EndpointSlice))
	}},
	{gv("coordination.k8s.io", "v1", "Lease"), func(o runtime.Object) field.ErrorList {
		return coordinationvalidation.ValidateLease(o.(*coordination.Lease))
	}},
}

func gv(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

// Pools the generator draws from: valid values of each field, then
// invalid ones after a "|" (owners: after a nil).
var (
	names = []string{
		"web", "web-1", "a", "a.b.c", "1abc", "x.y-z", strings.Repeat("n", 52), strings.Repeat("n", 63), "|",
		"Web", "a_b", "-a", "a-", "a..b", ".", "..", "a/b", "a%b", strings.Repeat("n", 53), strings.Repeat("n", 64),
		strings.Repeat("d.", 126) + "ab", strings.Repeat("d", 254), "web:1", "caf\u00e9",
	}
	generateNames = []string{"web-", "a.", "ok", "|", "Web-", "-x", strings.Repeat("g", 60), "a_b-"}
	namespaces    = []string{"default", "team-a", "|", "Team", "a.b", strings.Repeat("s", 64), "-ns"}
	labelKeys     = []string{"app", "example.com/tier", "k8s.io/" + strings.Repeat("k", 63), "|", "a b", "-x", "Example.COM/x", "x/", "/x", strings.Repeat("k", 64)}
	labelValues   = []string{"", "web", "a.b_c", strings.Repeat("v", 63), "|", "a b", "-web", "web-", strings.Repeat("v", 64), "\u00e9"}
	annKeys       = []string{"note", "example.com/note", "|", "bad key", "a//b", "-x"}
	finalizers    = []string{"kubernetes", "example.com/f", "orphan", "foregroundDeletion", "|", "foo", "Bad/f", "a b/c", "example.com/"}
	owners        = []map[string]any{
		{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u1"},
		{"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "uid": "u2", "controller": true},
		{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "u3", "controller": true},
		nil,
		{"apiVersion": "", "kind": "ConfigMap", "name": "o", "uid": "u4"},
		{"apiVersion": "v1", "kind": "", "name": "o", "uid": "u5"},
		{"apiVersion": "v1", "kind": "ConfigMap", "name": "", "uid": "u6"},
		{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": ""},
		{"apiVersion": "v1", "kind": "List", "name": "o", "uid": "u7"},
		{"apiVersion": "a/b/c", "kind": "X", "name": "o", "uid": "u8"},
	}
)

// pick draws from l: a valid value (before the "|") most of the time,
// an invalid one (after it) one time in eight.
func pick(r *rand.Rand, l []string) string {
	sep := slices.Index(l, "|")
	if r.IntN(8) == 0 {
		return l[sep+1+r.IntN(len(l)-sep-1)]
	}
	return l[r.IntN(sep)]
}

// metadata draws an object's metadata.
func metadata(r *rand.Rand) map[string]any {
	m := map[string]any{}
	switch r.IntN(10) {
	case 0:
	case 1:
		m["generateName"] = pick(r, generateNames)
	case 2:
		m["generateName"] = pick(r, generateNames)
		m["name"] = pick(r, names)
	default:
		m["name"] = pick(r, names)
	}
	switch r.IntN(5) {
	case 0:
	case 1:
		m["namespace"] = pick(r, namespaces)
	default:
		m["namespace"] = "default"
	}
	if r.IntN(2) == 0 {
		labels := map[string]any{}
		for range 1 + r.IntN(3) {
			labels[pick(r, labelKeys)] = pick(r, labelValues)
		}
		m["labels"] = labels
	}
	if r.IntN(3) == 0 {
		ann := map[string]any{}
		for range 1 + r.IntN(2) {
			ann[pick(r, annKeys)] = "v"
		}
		if r.IntN(40) == 0 {
			ann["big"] = strings.Repeat("x", 256*1024)
		}
		m["annotations"] = ann
	}
	if r.IntN(3) == 0 {
		var fs []any
		for range 1 + r.IntN(3) {
			fs = append(fs, pick(r, finalizers))
		}
		m["finalizers"] = fs
	}
	if r.IntN(4) == 0 {
		var os []any
		for range 1 + r.IntN(3) {
			o := owners[r.IntN(3)]
			if r.IntN(8) == 0 {
				o = owners[4+r.IntN(len(owners)-4)]
			}
			os = append(os, o)
		}
		m["ownerReferences"] = os
	}
	if r.IntN(20) == 0 {
		m["generation"] = int64(-1)
	}
	return m
}

// kubeMetadataErrors returns kube's create validation errors under
// metadata for u, after generating its name as the server does.
func kubeMetadataErrors(u *unstructured.Unstructured, validate func(runtime.Object) field.ErrorList) (field.ErrorList, error) {
	u = u.DeepCopy()
	if u.GetName() == "" && u.GetGenerateName() != "" {
		base := u.GetGenerateName()
		if len(base) > 58 {
			base = base[:58]
		}
		u.SetName(base + "xxxxx")
	}
	versioned, err := legacyscheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, versioned); err != nil {
		return nil, err
	}
	internal, err := legacyscheme.Scheme.ConvertToVersion(versioned, schema.GroupVersion{Group: u.GroupVersionKind().Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, err
	}
	var out field.ErrorList
	for _, e := range validate(internal) {
		if e.Field == "metadata" || strings.HasPrefix(e.Field, "metadata.") {
			out = append(out, e)
		}
	}
	// The server's order within one field follows map iteration; vapkit
	// sorts those runs by their text.
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].Field == out[i].Field {
			j++
		}
		slices.SortStableFunc(out[i:j], func(a, b *field.Error) int { return strings.Compare(a.Error(), b.Error()) })
		i = j
	}
	return out, nil
}

func render(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "%s\n", e.Error())
	}
	return b.String()
}

// TestBuiltinMetadata generates objects of every judged kind with varied
// metadata and requires vapkit's errors to equal kube's, message for
// message and in order.
func TestBuiltinMetadata(t *testing.T) {
	const perKind = 400
	var objects, invalid, diffs int
	for ki, k := range kinds {
		if !typecheck.KnowsBuiltinMetadata(k.gvk) {
			t.Errorf("%v: typecheck.KnowsBuiltinMetadata is false", k.gvk)
			continue
		}
		r := rand.New(rand.NewPCG(uint64(ki), 37))
		for i := range perKind {
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": metadata(r)}}
			u.SetGroupVersionKind(k.gvk)
			want, err := kubeMetadataErrors(u, k.validate)
			if err != nil {
				t.Fatalf("%v #%d: %v", k.gvk, i, err)
			}
			got := typecheck.ValidateBuiltinMetadata(u)
			objects++
			if len(want) > 0 {
				invalid++
			}
			if g, w := render(got), render(want); g != w {
				diffs++
				if diffs <= 20 {
					md := u.Object["metadata"].(map[string]any)
					if a, ok := md["annotations"].(map[string]any); ok && a["big"] != nil {
						md = map[string]any{"(with a 256 KiB annotation)": true}
					}
					t.Errorf("%v #%d metadata %v:\nvapkit:\n%skube:\n%s", k.gvk, i, md, g, w)
				}
			}
		}
	}
	t.Logf("%d kinds, %d objects (%d with metadata kube refuses), %d differences", len(kinds), objects, invalid, diffs)
	if invalid == 0 || invalid == objects {
		t.Errorf("the generator is degenerate: %d of %d objects invalid", invalid, objects)
	}
}
