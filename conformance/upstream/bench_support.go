//go:build !vapkit_harness

package upstream

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/warning"
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
	return d.ValidateObject(ctx, d.cl.c.Object)
}

// ValidateObject is Validate with obj in place of the request's object:
// the object a mutating admission phase left, as the API server hands it to
// the validating plugin after mutation.
func (d *Direct) ValidateObject(ctx context.Context, obj runtime.Object) (warnings []string, err error) {
	cl := d.cl
	req := cl.c.Request
	dryRun := req.DryRun != nil && *req.DryRun
	attrs := admission.NewAttributesRecord(obj, cl.c.OldObject, cl.kind,
		req.Namespace, req.Name, cl.resource, cl.subresrc, admission.Operation(req.Operation),
		cl.c.Options, dryRun, cl.userInfo)
	actx := audit.WithAuditContext(context.WithoutCancel(ctx))
	if err := initAudit(audit.AuditContextFrom(actx)); err != nil {
		return nil, err
	}
	d.warnings = d.warnings[:0]
	actx = warning.WithWarningRecorder(actx, &d.warnings)
	err = cl.plugin.Validate(actx, attrs, cl.objects)
	return d.warnings, err
}

// NewClusterTimeout is NewCluster with timeout, instead of 30 seconds, as
// the bound of each wait for the informers and the policy source. Very
// large cases need it: the upstream plugin compiles 10,000 policies in
// over a minute on a small machine.
func NewClusterTimeout(ctx context.Context, c *Case, timeout time.Duration) (*Cluster, error) {
	return newCluster(ctx, c, nil, timeout)
}

// Fork returns another handle on d's plugin, for another goroutine: the
// plugin, like the API server's, evaluates requests concurrently. It is
// released with d.
func (d *Direct) Fork() *Direct { return &Direct{cl: d.cl} }
