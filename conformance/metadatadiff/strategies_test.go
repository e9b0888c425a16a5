package metadatadiff

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	regmutatingwebhookconfiguration "k8s.io/kubernetes/pkg/registry/admissionregistration/mutatingwebhookconfiguration"
	regvalidatingwebhookconfiguration "k8s.io/kubernetes/pkg/registry/admissionregistration/validatingwebhookconfiguration"
	regendpoint "k8s.io/kubernetes/pkg/registry/core/endpoint"
	regnode "k8s.io/kubernetes/pkg/registry/core/node"
	regpodtemplate "k8s.io/kubernetes/pkg/registry/core/podtemplate"
	regruntimeclass "k8s.io/kubernetes/pkg/registry/node/runtimeclass"
	regcsidriver "k8s.io/kubernetes/pkg/registry/storage/csidriver"
	regvolumeattachment "k8s.io/kubernetes/pkg/registry/storage/volumeattachment"

	"github.com/vapkit/vapkit/typecheck"

	regcontrollerrevision "k8s.io/kubernetes/pkg/registry/apps/controllerrevision"
	regdaemonset "k8s.io/kubernetes/pkg/registry/apps/daemonset"
	regdeployment "k8s.io/kubernetes/pkg/registry/apps/deployment"
	regreplicaset "k8s.io/kubernetes/pkg/registry/apps/replicaset"
	regstatefulset "k8s.io/kubernetes/pkg/registry/apps/statefulset"
	reghorizontalpodautoscaler "k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	regcronjob "k8s.io/kubernetes/pkg/registry/batch/cronjob"
	regjob "k8s.io/kubernetes/pkg/registry/batch/job"
	reglease "k8s.io/kubernetes/pkg/registry/coordination/lease"
	regconfigmap "k8s.io/kubernetes/pkg/registry/core/configmap"
	reglimitrange "k8s.io/kubernetes/pkg/registry/core/limitrange"
	regnamespace "k8s.io/kubernetes/pkg/registry/core/namespace"
	regpersistentvolume "k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	regpersistentvolumeclaim "k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	regpod "k8s.io/kubernetes/pkg/registry/core/pod"
	regresourcequota "k8s.io/kubernetes/pkg/registry/core/resourcequota"
	regsecret "k8s.io/kubernetes/pkg/registry/core/secret"
	regservice "k8s.io/kubernetes/pkg/registry/core/service"
	regserviceaccount "k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	regendpointslice "k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	regingress "k8s.io/kubernetes/pkg/registry/networking/ingress"
	regingressclass "k8s.io/kubernetes/pkg/registry/networking/ingressclass"
	regnetworkpolicy "k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	regpoddisruptionbudget "k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	regclusterrole "k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	regclusterrolebinding "k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	regrole "k8s.io/kubernetes/pkg/registry/rbac/role"
	regrolebinding "k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	regpriorityclass "k8s.io/kubernetes/pkg/registry/scheduling/priorityclass"
	regstorageclass "k8s.io/kubernetes/pkg/registry/storage/storageclass"
)

// strategies are the judged kinds with kube-apiserver's create strategy
// of each (k8s.io/kubernetes v1.37.2 pkg/registry), which the server runs
// through rest.BeforeCreate: PrepareForCreate, then the strategy's
// validation, the generic metadata validation and declarative validation.
var strategies = []struct {
	gvk      schema.GroupVersionKind
	strategy rest.RESTCreateStrategy
}{
	{gv("", "v1", "Pod"), regpod.Strategy},
	{gv("", "v1", "Service"), regservice.Strategy},
	{gv("", "v1", "Namespace"), regnamespace.Strategy},
	{gv("", "v1", "ConfigMap"), regconfigmap.Strategy},
	{gv("", "v1", "Secret"), regsecret.Strategy},
	{gv("", "v1", "ServiceAccount"), regserviceaccount.Strategy},
	{gv("", "v1", "PersistentVolumeClaim"), regpersistentvolumeclaim.Strategy},
	{gv("", "v1", "PersistentVolume"), regpersistentvolume.Strategy},
	{gv("", "v1", "LimitRange"), reglimitrange.Strategy},
	{gv("", "v1", "ResourceQuota"), regresourcequota.Strategy},
	{gv("apps", "v1", "Deployment"), regdeployment.Strategy},
	{gv("apps", "v1", "ReplicaSet"), regreplicaset.Strategy},
	{gv("apps", "v1", "DaemonSet"), regdaemonset.Strategy},
	{gv("apps", "v1", "StatefulSet"), regstatefulset.Strategy},
	{gv("apps", "v1", "ControllerRevision"), regcontrollerrevision.Strategy},
	{gv("batch", "v1", "Job"), regjob.Strategy},
	{gv("batch", "v1", "CronJob"), regcronjob.Strategy},
	{gv("rbac.authorization.k8s.io", "v1", "Role"), regrole.Strategy},
	{gv("rbac.authorization.k8s.io", "v1", "ClusterRole"), regclusterrole.Strategy},
	{gv("rbac.authorization.k8s.io", "v1", "RoleBinding"), regrolebinding.Strategy},
	{gv("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"), regclusterrolebinding.Strategy},
	{gv("networking.k8s.io", "v1", "Ingress"), regingress.Strategy},
	{gv("networking.k8s.io", "v1", "IngressClass"), regingressclass.Strategy},
	{gv("networking.k8s.io", "v1", "NetworkPolicy"), regnetworkpolicy.Strategy},
	{gv("autoscaling", "v2", "HorizontalPodAutoscaler"), reghorizontalpodautoscaler.Strategy},
	{gv("scheduling.k8s.io", "v1", "PriorityClass"), regpriorityclass.Strategy},
	{gv("storage.k8s.io", "v1", "StorageClass"), regstorageclass.Strategy},
	{gv("discovery.k8s.io", "v1", "EndpointSlice"), regendpointslice.Strategy},
	{gv("coordination.k8s.io", "v1", "Lease"), reglease.Strategy},
	{gv("policy", "v1", "PodDisruptionBudget"), regpoddisruptionbudget.Strategy},
	{gv("", "v1", "Node"), regnode.Strategy},
	{gv("", "v1", "Endpoints"), regendpoint.Strategy},
	{gv("", "v1", "PodTemplate"), regpodtemplate.Strategy},
	{gv("node.k8s.io", "v1", "RuntimeClass"), regruntimeclass.Strategy},
	{gv("storage.k8s.io", "v1", "CSIDriver"), regcsidriver.Strategy},
	{gv("storage.k8s.io", "v1", "VolumeAttachment"), regvolumeattachment.Strategy},
	{gv("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"), regvalidatingwebhookconfiguration.Strategy},
	{gv("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"), regmutatingwebhookconfiguration.Strategy},
}

// serverMetadataErrors returns the errors under metadata kube-apiserver
// reports when u is created through strategy, after generating its name:
// the request's namespace is the object's (none for a cluster-scoped
// kind), as kubectl sends it.
func serverMetadataErrors(u *unstructured.Unstructured, strategy rest.RESTCreateStrategy) (field.ErrorList, error) {
	u = u.DeepCopy()
	generate(u)
	internal, err := toInternal(u, true)
	if err != nil {
		return nil, err
	}
	meta, err := metaAccessor(internal)
	if err != nil {
		return nil, err
	}
	rest.FillObjectMetaSystemFields(meta) // uid and creationTimestamp, as the server sets them
	ns := rest.ExpectedNamespaceForScope(u.GetNamespace(), strategy.NamespaceScoped())
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(ns, meta); err != nil {
		return nil, err
	}
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	gvk := u.GroupVersionKind()
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIGroup: gvk.Group, APIVersion: gvk.Version,
		Namespace: ns, Name: u.GetName(),
	})
	strategy.PrepareForCreate(ctx, internal)
	return metadataOnly(rest.ValidateCreate(ctx, internal, strategy)), nil
}

// TestBuiltinMetadata generates objects of every judged kind with varied
// metadata (fixed seeds) and requires vapkit's errors to equal those of
// the server's create path, message for message and in order.
func TestBuiltinMetadata(t *testing.T) {
	const perKind = 400
	var objects, invalid, diffs, nameless int
	for ki, k := range strategies {
		if !typecheck.KnowsBuiltinMetadata(k.gvk) {
			t.Errorf("%v: typecheck.KnowsBuiltinMetadata is false", k.gvk)
			continue
		}
		r := rand.New(rand.NewPCG(uint64(ki), 37))
		for i := range perKind {
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": metadata(r)}}
			u.SetGroupVersionKind(k.gvk)
			want, err := serverMetadataErrors(u, k.strategy)
			if err != nil {
				t.Fatalf("%v #%d: %v", k.gvk, i, err)
			}
			got := typecheck.ValidateBuiltinMetadata(u)
			if u.GetName() == "" && u.GetGenerateName() == "" {
				// Some kinds' declarative validation drops the
				// handwritten "name or generateName is required"; the
				// server then refuses the object anyway (400 "Name
				// parameter required." from the storage key), which
				// vapkit reports as the handwritten error.
				nameless++
				got, want = withoutNameRequired(got), withoutNameRequired(want)
			}
			objects++
			if len(want) > 0 {
				invalid++
			}
			if g, w := render(got), render(want); g != w {
				diffs++
				if diffs <= 20 {
					t.Errorf("%v #%d metadata %v:\nvapkit:\n%skube-apiserver:\n%s", k.gvk, i, shown(u), g, w)
				}
			}
		}
	}
	t.Logf("%d kinds, %d objects (%d with metadata kube-apiserver refuses, %d without name or generateName), %d differences", len(strategies), objects, invalid, nameless, diffs)
	if invalid == 0 || invalid == objects {
		t.Errorf("the generator is degenerate: %d of %d objects invalid", invalid, objects)
	}
}

// metaAccessor returns obj's ObjectMeta accessor.
func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no ObjectMeta", obj)
	}
	return o, nil
}

// withoutNameRequired drops the error for a missing name.
func withoutNameRequired(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Field != "metadata.name" || e.Type != field.ErrorTypeRequired {
			out = append(out, e)
		}
	}
	return out
}
