package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"time"
	"unsafe"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// syncTimeout bounds every wait for informers and the policy source.
const syncTimeout = 30 * time.Second

// Cluster is one running instance of the upstream plugin loaded with a
// case's cluster state. Create it with NewCluster, evaluate the case's
// request any number of times with Run, and release it with Close. A Cluster
// serialises concurrent Run calls.
type Cluster struct {
	c         *Case
	plugin    admission.ValidationInterface
	source    *orderedSource
	objects   admission.ObjectInterfaces
	cancel    context.CancelFunc
	mu        sync.Mutex
	docRanks  ranks
	userInfo  user.Info
	kind      schema.GroupVersionKind
	resource  schema.GroupVersionResource
	subresrc  string
	closeOnce sync.Once

	// compiled holds the evaluators of the bound policies, compiled in
	// order on the policy source's first request (see isolateVariables).
	compileOnce sync.Once
	compiled    map[string]validating.Validator
	varFields   []map[string]*apiservercel.DeclField
	isolateErr  error
}

var (
	vapGVR       = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	vapBindGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
	namespaceGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
)

// NewCluster starts the upstream ValidatingAdmissionPolicy plugin on fake
// clients holding c's cluster state and waits until it has compiled every
// bound policy and synced every parameter informer. ctx bounds the start-up
// only; call Close to stop the plugin.
func NewCluster(ctx context.Context, c *Case) (*Cluster, error) {
	return newCluster(ctx, c, nil, syncTimeout)
}

// newCluster starts the plugin, bounding each wait by timeout. Bound
// policies are compiled in compileOrder (policy names; see
// isolateVariables), the others after them in document order.
func newCluster(ctx context.Context, c *Case, compileOrder []string, timeout time.Duration) (*Cluster, error) {
	if c == nil || c.Request == nil {
		return nil, errors.New("upstream: case without request")
	}
	authz, err := NewRulesAuthorizer(c.AuthorizerRules)
	if err != nil {
		return nil, fmt.Errorf("upstream: case %s: %w", c.Name, err)
	}
	mapper := newRESTMapper(c.CRDs)

	client := fake.NewSimpleClientset()
	dynClient, err := newDynamicClient(c.CRDs)
	if err != nil {
		return nil, fmt.Errorf("upstream: case %s: %w", c.Name, err)
	}
	if err := loadObjects(c, mapper, client, dynClient); err != nil {
		return nil, fmt.Errorf("upstream: case %s: %w", c.Name, err)
	}

	pluginCtx, cancel := context.WithCancel(context.Background())
	cl := &Cluster{c: c, cancel: cancel, docRanks: documentRanks(c)}
	ok := false
	defer func() {
		if !ok {
			cancel()
		}
	}()

	factory := informers.NewSharedInformerFactory(client, 0)
	plugin, err := newPlugin(client, dynClient, factory, authz, pluginCtx.Done(), mapper)
	if err != nil {
		return nil, err
	}
	plugin.SetExcludedAdmissionResources(excludedResources)
	if err := cl.isolateVariables(plugin, compileOrder); err != nil {
		return nil, err
	}

	// Register and sync the informers the plugin will ask for before it
	// starts, so that its own waits succeed at their first check.
	synced := []cache.InformerSynced{
		factory.Admissionregistration().V1().ValidatingAdmissionPolicies().Informer().HasSynced,
		factory.Admissionregistration().V1().ValidatingAdmissionPolicyBindings().Informer().HasSynced,
		factory.Core().V1().Namespaces().Informer().HasSynced,
	}
	for _, p := range c.Policies {
		if gvr, ok := builtinParamResource(p, mapper); ok {
			if inf, err := factory.ForResource(gvr); err == nil {
				synced = append(synced, inf.Informer().HasSynced)
			}
		}
	}
	factory.Start(pluginCtx.Done())
	if err := waitUntil(ctx, timeout, "informers", func() bool {
		for _, s := range synced {
			if !s() {
				return false
			}
		}
		return true
	}); err != nil {
		return nil, err
	}
	if err := plugin.ValidateInitialization(); err != nil {
		return nil, fmt.Errorf("upstream: initializing plugin: %w", err)
	}
	if cl.isolateErr != nil {
		return nil, cl.isolateErr
	}

	field, err := sourceField(plugin)
	if err != nil {
		return nil, err
	}
	inner, ok2 := field.Interface().(generic.Source[validating.PolicyHook])
	if !ok2 || inner == nil {
		return nil, errors.New("upstream: plugin has no policy source")
	}
	if err := waitUntil(ctx, timeout, "policy source", inner.HasSynced); err != nil {
		return nil, err
	}
	for _, hook := range inner.Hooks() {
		if hook.ParamInformer != nil {
			if err := waitUntil(ctx, timeout, "param informer", hook.ParamInformer.Informer().HasSynced); err != nil {
				return nil, err
			}
		}
	}
	// The source's Run goroutine has read the field before HasSynced could
	// become true (an atomic store it made), so replacing it is race free.
	cl.source = &orderedSource{inner: inner}
	field.Set(reflect.ValueOf(generic.Source[validating.PolicyHook](cl.source)))

	validator, ok2 := admission.WithAudit(plugin).(admission.ValidationInterface)
	if !ok2 {
		return nil, errors.New("upstream: audited plugin is not a validation plugin")
	}
	cl.plugin = validator
	cl.prepareRequest()
	ok = true
	return cl, nil
}

// sourceField returns the settable "source" field of the generic plugin
// embedded in p.
func sourceField(p *validating.Plugin) (reflect.Value, error) {
	v := reflect.ValueOf(p.Plugin)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return reflect.Value{}, errors.New("upstream: validating plugin has no generic plugin")
	}
	f := v.Elem().FieldByName("source")
	want := reflect.TypeFor[generic.Source[validating.PolicyHook]]()
	if !f.IsValid() || f.Type() != want {
		return reflect.Value{}, fmt.Errorf("upstream: generic.Plugin has no field source of type %v (k8s.io/apiserver changed?)", want)
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem(), nil
}

func waitUntil(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("upstream: waiting for %s: %w", what, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("upstream: timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// builtinParamResource returns the resource of p's paramKind when it is a
// built-in kind served by the typed informer factory.
func builtinParamResource(p *admissionregistrationv1.ValidatingAdmissionPolicy, mapper meta.RESTMapper) (schema.GroupVersionResource, bool) {
	if p.Spec.ParamKind == nil {
		return schema.GroupVersionResource{}, false
	}
	gv, err := schema.ParseGroupVersion(p.Spec.ParamKind.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false
	}
	gvk := gv.WithKind(p.Spec.ParamKind.Kind)
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, false
	}
	return mapping.Resource, true
}

func newDynamicClient(crds []CRD) (*dynamicfake.FakeDynamicClient, error) {
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{}
	for _, crd := range crds {
		for _, v := range crd.Versions {
			gvk := schema.GroupVersionKind{Group: crd.Group, Version: v, Kind: crd.Kind}
			if scheme.Recognizes(gvk) {
				return nil, fmt.Errorf("kind %v is defined by two CRDs", gvk)
			}
			scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
			scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(crd.Kind+"List"), &unstructured.UnstructuredList{})
			listKinds[schema.GroupVersionResource{Group: crd.Group, Version: v, Resource: crd.Plural}] = crd.Kind + "List"
		}
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds), nil
}

// loadObjects stores the case's cluster state in the fake clients. Custom
// parameters are stored under every served version of their CRD.
func loadObjects(c *Case, mapper meta.RESTMapper, client *fake.Clientset, dyn *dynamicfake.FakeDynamicClient) error {
	create := func(gvr schema.GroupVersionResource, obj runtime.Object, ns, name string) error {
		var err error
		if _, isU := obj.(*unstructured.Unstructured); isU {
			err = dyn.Tracker().Create(gvr, obj, ns)
		} else {
			err = client.Tracker().Create(gvr, obj, ns)
		}
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("duplicate %s %s/%s", gvr.Resource, ns, name)
		}
		return err
	}
	for _, p := range c.Policies {
		if err := create(vapGVR, p.DeepCopy(), "", p.Name); err != nil {
			return err
		}
	}
	for _, b := range c.Bindings {
		if err := create(vapBindGVR, b.DeepCopy(), "", b.Name); err != nil {
			return err
		}
	}
	for _, ns := range c.Namespaces {
		if err := create(namespaceGVR, ns.DeepCopy(), "", ns.Name); err != nil {
			return err
		}
	}
	for _, p := range c.Params {
		accessor, err := meta.Accessor(p)
		if err != nil {
			return err
		}
		gvk := p.GetObjectKind().GroupVersionKind()
		if u, isU := p.(*unstructured.Unstructured); isU {
			crd, _ := c.crdFor(gvk.GroupKind())
			for _, v := range crd.Versions {
				cp := u.DeepCopy()
				cp.SetAPIVersion(schema.GroupVersion{Group: crd.Group, Version: v}.String())
				gvr := schema.GroupVersionResource{Group: crd.Group, Version: v, Resource: crd.Plural}
				if err := create(gvr, cp, accessor.GetNamespace(), accessor.GetName()); err != nil {
					return err
				}
			}
			continue
		}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return err
		}
		if err := create(mapping.Resource, p.DeepCopyObject(), accessor.GetNamespace(), accessor.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// prepareRequest derives the admission attributes that do not change
// between runs. The attributes carry what the client requested: the
// request's requestKind/requestResource when written, else kind/resource.
func (cl *Cluster) prepareRequest() {
	req := cl.c.Request
	cl.kind = schema.GroupVersionKind{Group: req.Kind.Group, Version: req.Kind.Version, Kind: req.Kind.Kind}
	cl.resource = schema.GroupVersionResource{Group: req.Resource.Group, Version: req.Resource.Version, Resource: req.Resource.Resource}
	cl.subresrc = req.SubResource
	if req.RequestKind != nil {
		cl.kind = schema.GroupVersionKind{Group: req.RequestKind.Group, Version: req.RequestKind.Version, Kind: req.RequestKind.Kind}
	}
	if req.RequestResource != nil {
		cl.resource = schema.GroupVersionResource{Group: req.RequestResource.Group, Version: req.RequestResource.Version, Resource: req.RequestResource.Resource}
		cl.subresrc = req.RequestSubResource
	}
	extra := map[string][]string{}
	for k, v := range req.UserInfo.Extra {
		extra[k] = append([]string(nil), v...)
	}
	if len(extra) == 0 {
		extra = nil
	}
	cl.userInfo = &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups, Extra: extra}
	cl.objects = objectInterfaces{equivalent: newEquivalentRegistry(cl.c.CRDs, cl.resource, cl.subresrc, cl.kind)}
}

// Close stops the plugin and its informers.
func (cl *Cluster) Close() {
	cl.closeOnce.Do(cl.cancel)
}

func copyObject(o runtime.Object) runtime.Object {
	if o == nil {
		return nil
	}
	return o.DeepCopyObject()
}

// Run evaluates the case's request once with the given ordering and returns
// the response the API server would send. ctx is checked before the
// evaluation starts; its deadline does not reach the plugin, whose CEL
// evaluation is bounded by the cost limits instead.
func (cl *Cluster) Run(ctx context.Context, order Ordering) (*admissionv1.AdmissionResponse, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req := cl.c.Request
	dryRun := req.DryRun != nil && *req.DryRun
	attrs := admission.NewAttributesRecord(copyObject(cl.c.Object), copyObject(cl.c.OldObject), cl.kind,
		req.Namespace, req.Name, cl.resource, cl.subresrc, admission.Operation(req.Operation),
		copyObject(cl.c.Options), dryRun, cl.userInfo)

	cl.source.setRanks(newRanks(order, cl.docRanks))
	defer cl.source.setRanks(ranks{})

	// The plugin stops CEL evaluation when its context ends; a caller's
	// deadline must not change the outcome, so only values are passed on.
	auditCtx := audit.WithAuditContext(context.WithoutCancel(ctx))
	ac := audit.AuditContextFrom(auditCtx)
	if err := initAudit(ac); err != nil {
		return nil, err
	}
	var validateErr error
	handler := filters.WithWarningRecorder(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		validateErr = cl.plugin.Validate(r.Context(), attrs, cl.objects)
	}))
	recorder := httptest.NewRecorder()
	httpReq, err := http.NewRequestWithContext(auditCtx, http.MethodPost, "/", nil)
	if err != nil {
		return nil, err
	}
	handler.ServeHTTP(recorder, httpReq)

	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: validateErr == nil}
	if validateErr != nil {
		status := responsewriters.ErrorToAPIStatus(validateErr)
		status.TypeMeta = metav1.TypeMeta{}
		resp.Result = status
	}
	headers, _ := utilnet.ParseWarningHeaders(recorder.Header().Values("Warning"))
	for _, h := range headers {
		resp.Warnings = append(resp.Warnings, h.Text)
	}
	if annotations := eventAnnotations(ac); len(annotations) > 0 {
		resp.AuditAnnotations = annotations
	}
	return resp, nil
}

// Run starts the upstream plugin on c, evaluates c's request once with the
// given ordering and stops the plugin.
func Run(ctx context.Context, c *Case, order Ordering) (*admissionv1.AdmissionResponse, error) {
	cl, err := NewCluster(ctx, c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return cl.Run(ctx, order)
}
