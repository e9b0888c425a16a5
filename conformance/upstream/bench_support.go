package upstream

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/featuregate"
)

// Direct calls a Cluster's plugin with as little around it as the API
// server itself puts there, for benchmarks: each Validate builds the
// request's admission attributes (sharing the case's decoded objects, which
// the validating plugin only reads), a fresh audit context and a warning
// recorder, and calls the audited plugin's Validate. There is no HTTP
// round trip, no copying of objects and no Ordering: the plugin's own policy
// source serves the hooks in upstream's order.
//
// A Direct belongs to one goroutine.
type Direct struct {
	cl       *Cluster
	warnings directWarnings
}

type directWarnings []string

func (w *directWarnings) AddWarning(_, text string) { *w = append(*w, text) }

// Direct puts the plugin's own policy source back in place and returns a
// handle that evaluates the case's request directly. Until release is
// called the Cluster is reserved for the handle: Run blocks. release
// restores the ordering wrapper and may be called more than once.
func (cl *Cluster) Direct() (d *Direct, release func(), err error) {
	cl.mu.Lock()
	plugin, err := validatingPlugin(cl.plugin)
	if err != nil {
		cl.mu.Unlock()
		return nil, nil, err
	}
	field, err := sourceField(plugin)
	if err != nil {
		cl.mu.Unlock()
		return nil, nil, err
	}
	field.Set(reflect.ValueOf(cl.source.inner))
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		field.Set(reflect.ValueOf(generic.Source[validating.PolicyHook](cl.source)))
		cl.mu.Unlock()
	}
	return &Direct{cl: cl}, release, nil
}

// validatingPlugin unwraps the plugin that admission.WithAudit wrapped.
func validatingPlugin(v admission.ValidationInterface) (*validating.Plugin, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("upstream: unexpected plugin wrapper %T", v)
	}
	f := rv.Elem().FieldByName("Interface")
	if !f.IsValid() || !f.CanInterface() {
		return nil, fmt.Errorf("upstream: plugin wrapper %T has no Interface field (k8s.io/apiserver changed?)", v)
	}
	p, ok := f.Interface().(*validating.Plugin)
	if !ok || p == nil {
		return nil, errors.New("upstream: audited plugin is not the validating plugin")
	}
	return p, nil
}

// Validate evaluates the case's request once and returns the plugin's
// error (nil when the request is admitted) and the warnings it recorded.
// The warnings slice is reused by the next call.
func (d *Direct) Validate(ctx context.Context) (warnings []string, err error) {
	cl := d.cl
	req := cl.c.Request
	dryRun := req.DryRun != nil && *req.DryRun
	attrs := admission.NewAttributesRecord(cl.c.Object, cl.c.OldObject, cl.kind,
		req.Namespace, req.Name, cl.resource, cl.subresrc, admission.Operation(req.Operation),
		cl.c.Options, dryRun, cl.userInfo)
	actx := audit.WithAuditContext(context.WithoutCancel(ctx))
	if err := audit.AuditContextFrom(actx).Init(audit.RequestAuditConfig{Level: auditinternal.LevelMetadata}, nil); err != nil {
		return nil, fmt.Errorf("upstream: audit context: %w", err)
	}
	d.warnings = d.warnings[:0]
	actx = warning.WithWarningRecorder(actx, &d.warnings)
	err = cl.plugin.Validate(actx, attrs, cl.objects)
	return d.warnings, err
}

// NewClusterTimeout is NewCluster with timeout, instead of 30 seconds, as
// the bound of each wait for the informers and the policy source. Very
// large cases need it: the upstream plugin compiles 10,000 policies in
// over a minute on a small machine. It repeats NewCluster's steps; keep the
// two in step.
func NewClusterTimeout(ctx context.Context, c *Case, timeout time.Duration) (*Cluster, error) {
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
	plugin, err := validating.NewPlugin(nil)
	if err != nil {
		return nil, fmt.Errorf("upstream: creating plugin: %w", err)
	}
	initializer.New(client, dynClient, factory, authz, featuregate.NewFeatureGate(),
		compatibility.DefaultBuildEffectiveVersion(), pluginCtx.Done(), mapper).Initialize(plugin)
	plugin.SetExcludedAdmissionResources(excludedResources)

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
	if err := waitUntilTimeout(ctx, timeout, "informers", func() bool {
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

	field, err := sourceField(plugin)
	if err != nil {
		return nil, err
	}
	inner, ok2 := field.Interface().(generic.Source[validating.PolicyHook])
	if !ok2 || inner == nil {
		return nil, errors.New("upstream: plugin has no policy source")
	}
	if err := waitUntilTimeout(ctx, timeout, "policy source", inner.HasSynced); err != nil {
		return nil, err
	}
	for _, hook := range inner.Hooks() {
		if hook.ParamInformer != nil {
			if err := waitUntilTimeout(ctx, timeout, "param informer", hook.ParamInformer.Informer().HasSynced); err != nil {
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
	cl.objects = objectInterfaces{equivalent: nil}
	cl.prepareRequest()
	ok = true
	return cl, nil
}

func waitUntilTimeout(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
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
