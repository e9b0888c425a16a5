package policy

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/vapkit/vapkit/audit"
	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/internal/builtin"
	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
)

// Evaluate admits or denies req as the API server's ValidatingAdmissionPolicy
// plugin does.
//
// The error is non-nil only when no decision can be produced: an invalid
// request or a done ctx. Everything the policies say, including their errors
// under failurePolicy, is in the Decision. A failed namespace lookup denies
// the request with the lookup's own status (404 for a missing namespace),
// whatever the failurePolicy, as in the API server.
//
// Cancellation: when ctx is done before the decision is complete, Evaluate
// returns a nil Decision and ctx.Err() (errors.Is works with
// context.Canceled and context.DeadlineExceeded). A running expression stops
// at its next interrupt check (every celenv.CheckFrequency comprehension
// iterations) with "operation interrupted"; no further binding or policy is
// started, and plug-ins receive ctx. A partial decision is never returned.
//
// Policies are evaluated in name order, then bindings in name order, then
// params in namespace/name order. The API server's order is unspecified;
// where several policies deny, vapkit reports the first in this order.
//
// The Trace has an entry for every policy: one per evaluated (binding,
// param), NotMatched for policies and bindings that do not match the
// request, and, after those, Skipped entries with a reason in Err for what
// is never evaluated (policies without bindings, bindings whose policy is
// missing). Errors ignored under failurePolicy Ignore are in Err or in the
// expression entries.
func (e *Evaluator) Evaluate(ctx context.Context, req *Request) (*Decision, error) {
	if req == nil {
		return nil, errors.New("request is nil")
	}
	if err := req.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st := newRequestState(e, req)
	defer st.release()
	d := &Decision{Allowed: true}
	if matching.Exempt(req.Resource.GroupResource()) {
		d.Trace = e.exemptTrace()
		return d, nil
	}
	if err := st.dispatch(ctx, d); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		d.Allowed = false
		d.Status = statusFor(err)
	}
	if d.Status == nil && len(st.denied) > 0 {
		d.Allowed = false
		d.Status = st.forbidden(st.denied[0])
	}
	d.Warnings = st.warnings.out
	if len(st.failures) > 0 {
		if v, ok := audit.EncodeValidationFailures(st.failures); ok {
			st.annotate(audit.ValidationFailureKey, v)
		}
	}
	if len(st.annotations) > 0 {
		d.AuditAnnotations = st.annotations
	}
	d.Trace = st.trace
	return d, nil
}

// requestState is everything one Evaluate call computes and remembers.
type requestState struct {
	e     *Evaluator
	req   *Request
	attrs matching.Attributes
	authz celenv.Authorizer

	versioned []*versionedObjects // one per kind; requests rarely need two
	params    map[runtime.Object]any

	// requestVals are the request values built, per resource and kind;
	// a request rarely needs more than one.
	requestVals []requestVal
	// lastLazy is the lazy request value of lastLazyKey: most policies
	// of a request see the same resource and kind.
	lastLazyKey requestKey
	lastLazy    celenv.Lazy
	options     any
	optionsDone bool

	nsLoaded           bool
	ns                 *corev1.Namespace
	nsWhole, nsTrimmed map[string]any // converted on first use
	authzVal, rrVal    ref.Val
	// sizes remembers the input sizes of untracked evaluations.
	sizes celenv.Sizes
	// results, msgPtrs, decisions and audits are reused by every policy
	// evaluation.
	results   []celenv.Result
	msgPtrs   []*celenv.Result
	decisions []decision
	audits    []auditResult

	denied      []deniedDecision
	failures    []audit.ValidationFailure
	warnings    warningRecorder
	annotations map[string]string
	trace       []PolicyTrace
	// exprSlab holds the expression entries of the trace, carved out for
	// each policy evaluation; exprHint is the size of its first
	// allocation, enough for every candidate policy evaluated once.
	exprSlab []ExprTrace
	exprHint int
}

// statePool recycles requestStates for their scratch buffers and memos;
// what a Decision keeps (warnings, annotations, trace) is never recycled.
var statePool = sync.Pool{New: func() any { return new(requestState) }}

// newRequestState returns a zeroed requestState for req that keeps only the
// capacity of a recycled one's scratch.
func newRequestState(e *Evaluator, req *Request) *requestState {
	old := statePool.Get().(*requestState)
	*old = requestState{
		e:   e,
		req: req,
		attrs: matching.Attributes{
			Operation:   string(req.Operation),
			Resource:    req.Resource,
			SubResource: req.SubResource,
			Kind:        req.Kind,
			Name:        req.Name,
			Namespace:   req.Namespace,
			Object:      req.Object,
			OldObject:   req.OldObject,
		},
		authz:       celenv.NewCachingAuthorizer(e.opts.Authorizer),
		versioned:   old.versioned[:0],
		params:      old.params,
		requestVals: old.requestVals[:0],
		sizes:       old.sizes,
		results:     old.results,
		msgPtrs:     old.msgPtrs,
		decisions:   old.decisions,
		audits:      old.audits,
		denied:      old.denied[:0],
		failures:    old.failures[:0],
	}
	return old
}

// release clears what st references, so that the pool pins no request's
// values, and returns st to the pool.
func (st *requestState) release() {
	clear(st.versioned[:cap(st.versioned)])
	clear(st.params)
	clear(st.requestVals[:cap(st.requestVals)])
	st.sizes.Reset()
	clear(st.results[:cap(st.results)])
	clear(st.msgPtrs[:cap(st.msgPtrs)])
	clear(st.decisions[:cap(st.decisions)])
	clear(st.audits[:cap(st.audits)])
	clear(st.denied[:cap(st.denied)])
	clear(st.failures[:cap(st.failures)])
	*st = requestState{
		versioned: st.versioned, params: st.params, requestVals: st.requestVals, sizes: st.sizes, results: st.results, msgPtrs: st.msgPtrs,
		decisions: st.decisions, audits: st.audits, denied: st.denied, failures: st.failures,
	}
	statePool.Put(st)
}

type deniedDecision struct {
	policy, binding string // binding empty for policy-level errors
	message         string
	reason          metav1.StatusReason
}

// versionedObjects are the request's objects converted to one kind, in the
// form CEL sees.
type versionedObjects struct {
	kind              schema.GroupVersionKind
	object, oldObject any
	err               error // preparing the CEL values failed
}

// Trace explanations for entries that were never evaluated.
var (
	errNoBindings     = errors.New("policy has no bindings")
	errPolicyNotFound = errors.New("binding's policy not found")
	errDropped        = errors.New("policy is not enforced: its paramKind apiVersion cannot be parsed")
	errExempt         = errors.New("resource is exempt from admission policies")
)

// exemptTrace lists every policy and binding as skipped, for requests on
// the admission registration resources themselves.
func (e *Evaluator) exemptTrace() []PolicyTrace {
	tr := make([]PolicyTrace, 0, len(e.policies)+len(e.skipped))
	for _, cp := range e.policies {
		tr = append(tr, PolicyTrace{Policy: cp.policy.Name, Outcome: Skipped, Err: errExempt})
	}
	return append(tr, e.skipped...)
}

// dispatch evaluates the candidate policies in name order. The trace gets an
// entry for each candidate policy the request does not match (and, with
// Options.TraceUnmatched, for every other policy too), each
// evaluated (policy, binding, param) and, last, the entries of
// Evaluator.skipped, so that nothing is left out silently.
func (st *requestState) dispatch(ctx context.Context, d *Decision) error {
	mopts := matching.Options{Namespaces: st.e.opts.Namespaces, Resources: st.e.mapper}
	cands := st.e.candidatesFor(&st.attrs)
	for _, id := range cands {
		cp := st.e.policies[id]
		st.exprHint += len(cp.matchConditions) + cp.traced
	}
	st.exprHint = min(st.exprHint, maxExprHint)
	visit := cands
	if st.e.opts.TraceUnmatched {
		st.trace = make([]PolicyTrace, 0, len(st.e.policies)+len(st.e.skipped))
		visit = st.e.allIDs
	} else {
		st.trace = make([]PolicyTrace, 0, len(cands)+len(st.e.skipped))
	}
	for _, id := range visit {
		if err := ctx.Err(); err != nil {
			return err
		}
		cp := st.e.policies[id]
		name := cp.policy.Name
		// Candidate IDs are sorted indexes into policies; with
		// TraceUnmatched every policy is visited and the ones the index
		// rules out are recorded as not matched.
		if len(cands) == 0 || cands[0] != id {
			st.trace = append(st.trace, PolicyTrace{Policy: name, Outcome: NotMatched})
			continue
		}
		cands = cands[1:]
		res, err := matching.MatchPolicy(ctx, cp.policy, &st.attrs, mopts)
		if err != nil {
			st.configError(cp, nil, err)
			continue
		}
		if !res.Matched {
			st.trace = append(st.trace, PolicyTrace{Policy: name, Outcome: NotMatched})
			continue
		}
		if cp.configErr != nil {
			st.configError(cp, nil, cp.configErr)
			continue
		}
		collector := audit.NewCollector(name)
		for _, b := range cp.bindings {
			if err := ctx.Err(); err != nil {
				return err
			}
			ok, err := matching.MatchBinding(ctx, b, &st.attrs, mopts)
			if err != nil {
				st.configError(cp, b, err)
				continue
			}
			if !ok {
				st.trace = append(st.trace, PolicyTrace{Policy: name, Binding: b.Name, Outcome: NotMatched, Actions: b.Spec.ValidationActions})
				continue
			}
			ps, err := params.Resolve(ctx, st.e.opts.Params, params.Request{
				ParamKind:        cp.paramKind,
				ParamRef:         b.Spec.ParamRef,
				Namespaced:       cp.paramsScoped,
				RequestNamespace: st.req.Namespace,
			})
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				st.configError(cp, b, err)
				continue
			}
			var vo *versionedObjects
			if len(ps) > 0 {
				vo, err = st.versionedFor(res.Kind)
				if err != nil {
					st.configError(cp, b, fmt.Errorf("failed to convert object version: %w", err))
					continue
				}
			}
			if err := st.loadNamespace(ctx); err != nil {
				// The lookup failure aborts the whole request.
				st.trace = append(st.trace, PolicyTrace{Policy: name, Binding: b.Name, Outcome: Errored, Actions: b.Spec.ValidationActions,
					Err: fmt.Errorf("namespace lookup failed; request aborted: %w", err)})
				return err
			}
			if len(ps) == 0 {
				st.trace = append(st.trace, PolicyTrace{Policy: name, Binding: b.Name, Outcome: Skipped, Actions: b.Spec.ValidationActions,
					Err: errors.New("no params found; parameterNotFoundAction allows the request")})
			}
			for _, p := range ps {
				pv, pname := st.paramValue(cp, p)
				tr := PolicyTrace{Policy: name, Binding: b.Name, Param: pname, Actions: b.Spec.ValidationActions}
				r := st.validate(ctx, cp, res.Resource, vo, pv, &tr)
				st.fold(cp, b, r, collector, &tr)
				st.trace = append(st.trace, tr)
			}
		}
		for _, a := range collector.Annotations() {
			st.annotate(a.Key, a.Value)
		}
	}
	st.trace = append(st.trace, st.e.skipped...)
	return ctx.Err()
}

// exprTraces returns an empty slice with room for n expression entries,
// carved from an allocation shared with other policy evaluations of the
// request, since a trace entry per policy costs an allocation each.
func (st *requestState) exprTraces(n int) []ExprTrace {
	if n == 0 {
		return nil
	}
	if cap(st.exprSlab)-len(st.exprSlab) < n {
		st.exprSlab = make([]ExprTrace, 0, max(n, st.exprHint))
		st.exprHint = 0 // later allocations are for what the hint missed
	}
	l := len(st.exprSlab)
	st.exprSlab = st.exprSlab[:l+n]
	return st.exprSlab[l : l : l+n]
}

// maxExprHint bounds the first trace allocation of a request.
const maxExprHint = 512

// candidateKey is what the index's candidates for a request depend on.
type candidateKey struct {
	operation   string
	resource    schema.GroupVersionResource
	subresource string
}

// maxCandidateMemo bounds Evaluator.candidates.
const maxCandidateMemo = 1024

// candidatesFor returns the IDs of the policies that may match a, sorted;
// the slice is shared and must not be modified.
func (e *Evaluator) candidatesFor(a *matching.Attributes) []int {
	if _, ours := e.mapper.(*builtin.Mapper); !ours {
		// A caller's own mapper may change its answers.
		return e.index.CandidatesFor(a, e.mapper)
	}
	k := candidateKey{operation: a.Operation, resource: a.Resource, subresource: a.SubResource}
	if c, ok := e.candidates.Load(k); ok {
		return c.([]int)
	}
	c := e.index.CandidatesFor(a, e.mapper)
	if e.candidateCount.Load() < maxCandidateMemo {
		if _, loaded := e.candidates.LoadOrStore(k, c); !loaded {
			e.candidateCount.Add(1)
		}
	}
	return c
}

// annotate adds an audit annotation; like the API server's audit context it
// keeps the first value when a key is added again with another value.
func (st *requestState) annotate(key, value string) {
	if st.annotations == nil {
		st.annotations = map[string]string{}
	}
	if _, ok := st.annotations[key]; ok {
		return
	}
	st.annotations[key] = value
}

// configError records a policy- or binding-level error under the policy's
// failurePolicy, ignoring validationActions, as the API server does.
func (st *requestState) configError(cp *compiledPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, err error) {
	tr := PolicyTrace{Policy: cp.policy.Name, Outcome: Errored, Err: err}
	dd := deniedDecision{policy: cp.policy.Name}
	if b != nil {
		tr.Binding = b.Name
		tr.Actions = b.Spec.ValidationActions
		dd.binding = b.Name
		dd.message = "failed to configure binding: " + err.Error()
	} else {
		dd.message = "failed to configure policy: " + err.Error()
	}
	switch cp.failurePolicy {
	case admissionregistrationv1.Ignore:
		tr.Err = fmt.Errorf("ignored under failurePolicy Ignore: %w", err)
	case admissionregistrationv1.Fail:
		st.denied = append(st.denied, dd)
	default:
		dd.message = fmt.Sprintf("unrecognized failure policy: '%v'", cp.failurePolicy)
		st.denied = append(st.denied, dd)
	}
	st.trace = append(st.trace, tr)
}

// versionedFor converts the request's objects to kind once per request.
func (st *requestState) versionedFor(kind schema.GroupVersionKind) (*versionedObjects, error) {
	if i := slices.IndexFunc(st.versioned, func(vo *versionedObjects) bool { return vo.kind == kind }); i >= 0 {
		vo := st.versioned[i]
		return vo, nil
	}
	vo := &versionedObjects{kind: kind}
	convert := func(obj runtime.Object) (runtime.Object, error) {
		if obj == nil || kind == st.req.Kind || kind.Empty() {
			return obj, nil
		}
		if gvk := obj.GetObjectKind().GroupVersionKind(); gvk == kind {
			return obj, nil
		}
		return st.e.converter.Convert(obj, kind)
	}
	obj, err := convert(st.req.Object)
	if err != nil {
		return nil, err
	}
	old, err := convert(st.req.OldObject)
	if err != nil {
		return nil, err
	}
	if old != nil {
		m, err := objectValue(old, nil)
		if err != nil {
			vo.err = fmt.Errorf("failed to prepare oldObject variable for evaluation: %w", err)
		} else {
			vo.oldObject = m
		}
	}
	if obj != nil && vo.err == nil {
		m, err := objectValue(obj, nil)
		if err != nil {
			vo.err = fmt.Errorf("failed to prepare object variable for evaluation: %w", err)
		} else {
			vo.object = m
		}
	}
	st.versioned = append(st.versioned, vo)
	return vo, nil
}

// isTypedObject reports whether obj is a non-nil typed Go struct rather than
// an unstructured or raw object.
func isTypedObject(obj runtime.Object) bool {
	switch obj.(type) {
	case nil, runtime.Unstructured, *runtime.Unknown:
		return false
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Kind() == reflect.Struct
}

// objectValue returns the CEL value of obj as object, oldObject or params.
// A typed struct is read lazily with [celenv.TypedObject], the fields in
// set replacing its own; without set, apiVersion and kind come from the
// scheme when the object leaves them empty, as [builtin.ToUnstructured]
// does. Any other object is converted with [builtin.ToUnstructured].
func objectValue(obj runtime.Object, set map[string]string) (any, error) {
	if !isTypedObject(obj) {
		return builtin.ToUnstructured(obj)
	}
	if set == nil {
		if apiVersion, kind, ok := typeMeta(obj); ok && (apiVersion == "" || kind == "") {
			if gvks, _, err := builtin.Scheme().ObjectKinds(obj); err == nil && len(gvks) > 0 {
				schemeVersion, schemeKind := gvks[0].ToAPIVersionAndKind()
				set = map[string]string{}
				if apiVersion == "" {
					set["apiVersion"] = schemeVersion
				}
				if kind == "" {
					set["kind"] = schemeKind
				}
			}
		}
	}
	return celenv.TypedObject(obj, set), nil
}

// typeMeta returns obj's apiVersion and kind as written. Typed objects
// embed metav1.TypeMeta and are read directly: meta.TypeAccessor parses and
// re-formats the apiVersion.
func typeMeta(obj runtime.Object) (apiVersion, kind string, ok bool) {
	if tm, isTM := obj.GetObjectKind().(*metav1.TypeMeta); isTM && tm != nil {
		return tm.APIVersion, tm.Kind, true
	}
	ta, err := meta.TypeAccessor(obj)
	if err != nil {
		return "", "", false
	}
	return ta.GetAPIVersion(), ta.GetKind(), true
}

// loadNamespace fetches the request's namespace once, as the API server does
// before evaluating a binding. A Namespace request has no namespaceObject.
func (st *requestState) loadNamespace(ctx context.Context) error {
	if st.nsLoaded {
		return nil
	}
	name := st.req.Namespace
	if k := st.req.Kind; k.Group == "" && k.Version == "v1" && k.Kind == "Namespace" {
		name = ""
	}
	if name != "" {
		var ns *corev1.Namespace
		var err error
		if st.e.opts.Namespaces == nil {
			err = apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
		} else {
			ns, err = st.e.opts.Namespaces.GetNamespace(ctx, name)
		}
		if err != nil {
			return err
		}
		if ns == nil {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
		}
		st.ns = ns
	}
	st.nsLoaded = true
	return nil
}

// authorizerValues returns the values of `authorizer` and
// `authorizer.requestResource`, built once per request: both act for the
// request's user, and requestResource names the resource as requested.
func (st *requestState) authorizerValues(ctx context.Context) (ref.Val, ref.Val) {
	if st.authzVal == nil {
		user := st.req.UserInfo
		st.authzVal = celenv.NewAuthorizerValue(ctx, st.authz, user)
		st.rrVal = celenv.NewRequestResourceValue(ctx, st.authz, user, celenv.RequestResource{
			Group: st.req.Resource.Group, Resource: st.req.Resource.Resource, Subresource: st.req.SubResource,
			Namespace: st.req.Namespace, Name: st.req.Name,
		})
	}
	return st.authzVal, st.rrVal
}

// namespaceWhole returns the JSON form of the request's namespace as audit
// annotations see it (without apiVersion and kind, as the server's informer
// objects), converted on first use.
func (st *requestState) namespaceWhole() any {
	if st.nsWhole == nil {
		ns := *st.ns
		ns.TypeMeta = metav1.TypeMeta{}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ns)
		if err != nil {
			return nil
		}
		st.nsWhole = m
	}
	return st.nsWhole
}

// trimmedMetadata are the metadata fields the API server copies into the
// namespaceObject of validations (CreateNamespaceObject).
var trimmedMetadata = []string{
	"name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers",
}

// namespaceTrimmed returns namespaceObject as validations and message
// expressions see it: spec, status and a subset of metadata.
func (st *requestState) namespaceTrimmed() any {
	if st.nsTrimmed == nil {
		whole, ok := st.namespaceWhole().(map[string]any)
		if !ok {
			return nil
		}
		t := map[string]any{}
		for _, k := range []string{"spec", "status"} {
			if v, ok := whole[k]; ok {
				t[k] = v
			}
		}
		meta := map[string]any{}
		if wm, ok := whole["metadata"].(map[string]any); ok {
			for _, k := range trimmedMetadata {
				if v, ok := wm[k]; ok {
					meta[k] = v
				}
			}
		}
		t["metadata"] = meta
		st.nsTrimmed = t
	}
	return st.nsTrimmed
}

// paramValue returns the CEL form of a param, converted once per request.
// Built-in kinds get apiVersion and kind from the policy's paramKind, as the
// API server injects them into its typed informer objects.
func (st *requestState) paramValue(cp *compiledPolicy, p runtime.Object) (any, *k8stypes.NamespacedName) {
	if p == nil {
		return nil, nil
	}
	var nn *k8stypes.NamespacedName
	if acc, err := meta.Accessor(p); err == nil {
		nn = &k8stypes.NamespacedName{Namespace: acc.GetNamespace(), Name: acc.GetName()}
	}
	if v, ok := st.params[p]; ok {
		return v, nn
	}
	inject := builtin.Scheme().Recognizes(p.GetObjectKind().GroupVersionKind()) || p.GetObjectKind().GroupVersionKind().Empty()
	var v any
	if isTypedObject(p) {
		var set map[string]string
		if inject {
			set = cp.paramTypeMeta
		}
		tv, err := objectValue(p, set)
		if err != nil {
			v = types.NewErr("failed to prepare params: %v", err)
		} else {
			v = tv
		}
		st.rememberParam(p, v)
		return v, nn
	}
	m, err := builtin.ToUnstructured(p)
	if err != nil {
		v = types.NewErr("failed to prepare params: %v", err)
	} else {
		if inject {
			m["apiVersion"] = cp.paramKind.APIVersion
			m["kind"] = cp.paramKind.Kind
		}
		v = m
	}
	st.rememberParam(p, v)
	return v, nn
}

func (st *requestState) rememberParam(p runtime.Object, v any) {
	if st.params == nil {
		st.params = map[runtime.Object]any{}
	}
	st.params[p] = v
}

// forbidden builds the status a denied client receives, as the API server's
// admission.NewForbidden plus the dispatcher's reason and cause.
func (st *requestState) forbidden(d deniedDecision) *metav1.Status {
	var msg string
	if d.binding != "" {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	} else {
		msg = fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: %s", d.policy, d.message)
	}
	name := st.req.Name
	if name == "" {
		name = "Unknown"
		if obj := st.req.Object; obj != nil {
			if acc, err := meta.Accessor(obj); err != nil {
				name = "Unknown/errorGettingName"
			} else if acc.GetName() != "" {
				name = acc.GetName()
			} else if acc.GetGenerateName() != "" {
				name = acc.GetGenerateName()
			}
		}
	}
	status := apierrors.NewForbidden(st.req.Resource.GroupResource(), name, errors.New(msg)).ErrStatus
	reason := d.reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	status.Reason = reason
	status.Code = reasonToCode(reason)
	status.Details.Causes = append(status.Details.Causes, metav1.StatusCause{Message: msg})
	return &status
}

// reasonToCode maps a denial reason to its HTTP code, as the API server does.
func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return 403
	case metav1.StatusReasonUnauthorized:
		return 401
	case metav1.StatusReasonRequestEntityTooLarge:
		return 413
	}
	return 422
}

// statusFor converts an error that aborted the request to the status the API
// server would send: API errors keep their status, others are internal errors.
func statusFor(err error) *metav1.Status {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		st := s.Status()
		return &st
	}
	st := apierrors.NewInternalError(err).ErrStatus
	return &st
}

// requestValue returns the `request` variable for the given resource and
// kind: the JSON form of the admission request, built once per request and
// resource/kind pair.
func (st *requestState) requestValue(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) any {
	key := requestKey{gvr, gvk}
	for _, rv := range st.requestVals {
		if rv.key == key {
			return rv.val
		}
	}
	if !st.optionsDone {
		st.optionsDone = true
		if st.req.Options != nil {
			m, err := builtin.ToUnstructured(st.req.Options)
			if err != nil {
				st.options = types.NewErr("failed to prepare request options: %v", err)
			} else {
				st.options = m
			}
		}
	}
	var v any
	if _, failed := st.options.(ref.Val); failed {
		// The options could not be converted: the map carries the error
		// value where request.options is read.
		v = admissionRequestJSON(st.req, gvr, gvk, st.options)
	} else {
		v = celenv.TypedValue(admissionRequest(st.req, gvr, gvk, st.options))
	}
	st.requestVals = append(st.requestVals, requestVal{key: key, val: v})
	return v
}

// lazyRequest is requestValue, built when an expression first reads
// `request`.
func (st *requestState) lazyRequest(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind) celenv.Lazy {
	key := requestKey{gvr, gvk}
	if st.lastLazy == nil || st.lastLazyKey != key {
		st.lastLazyKey = key
		st.lastLazy = func() any { return st.requestValue(gvr, gvk) }
	}
	return st.lastLazy
}

type requestKey struct {
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
}

type requestVal struct {
	key requestKey
	val any
}

// admissionRequest builds the admission/v1 AdmissionRequest the API server
// passes to CEL (CreateAdmissionRequest): kind and resource are the matched
// ones, requestKind and requestResource the request's; uid is empty because
// the server does not set it; object and oldObject are empty because the
// request carries them in their own variables. options is the converted
// options object, or nil. Read through celenv.TypedValue, it is what
// admissionRequestJSON builds eagerly, converted only where an expression
// reads it.
func admissionRequest(r *Request, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, options any) *admissionv1.AdmissionRequest {
	dryRun := r.DryRun
	kind, resource := metav1.GroupVersionKind(r.Kind), metav1.GroupVersionResource(r.Resource)
	ar := &admissionv1.AdmissionRequest{
		Kind: metav1.GroupVersionKind(gvk), Resource: metav1.GroupVersionResource(gvr),
		SubResource: r.SubResource, RequestKind: &kind, RequestResource: &resource,
		RequestSubResource: r.SubResource, Name: r.Name, Namespace: r.Namespace,
		Operation: r.Operation, UserInfo: r.UserInfo, DryRun: &dryRun,
	}
	if m, ok := options.(map[string]any); ok {
		ar.Options = runtime.RawExtension{Object: &unstructured.Unstructured{Object: m}}
	}
	return ar
}

// admissionRequestJSON builds what runtime.DefaultUnstructuredConverter
// makes of the admission/v1 AdmissionRequest the API server passes to CEL:
// kind and resource are the matched ones, requestKind and requestResource
// the request's; fields marked omitempty are absent when empty; uid is empty
// because the server does not set it; object and oldObject are null because
// the request carries them in their own variables. Evaluation uses the lazy
// admissionRequest; this map serves when options failed to convert (the
// error is the value of request.options) and as the tests' oracle.
func admissionRequestJSON(r *Request, gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, options any) map[string]any {
	m := map[string]any{
		"uid":             "",
		"kind":            map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
		"resource":        map[string]any{"group": gvr.Group, "version": gvr.Version, "resource": gvr.Resource},
		"requestKind":     map[string]any{"group": r.Kind.Group, "version": r.Kind.Version, "kind": r.Kind.Kind},
		"requestResource": map[string]any{"group": r.Resource.Group, "version": r.Resource.Version, "resource": r.Resource.Resource},
		"operation":       string(r.Operation),
		"userInfo":        userInfoJSON(r.UserInfo),
		"dryRun":          r.DryRun,
		"options":         options,
		"object":          nil,
		"oldObject":       nil,
	}
	if r.SubResource != "" {
		m["subResource"] = r.SubResource
		m["requestSubResource"] = r.SubResource
	}
	if r.Name != "" {
		m["name"] = r.Name
	}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	return m
}

func userInfoJSON(u authenticationv1.UserInfo) map[string]any {
	m := map[string]any{}
	if u.Username != "" {
		m["username"] = u.Username
	}
	if u.UID != "" {
		m["uid"] = u.UID
	}
	if len(u.Groups) > 0 {
		groups := make([]any, len(u.Groups))
		for i, g := range u.Groups {
			groups[i] = g
		}
		m["groups"] = groups
	}
	if len(u.Extra) > 0 {
		extra := make(map[string]any, len(u.Extra))
		for k, vs := range u.Extra {
			if vs == nil {
				extra[k] = nil
				continue
			}
			l := make([]any, len(vs))
			for i, v := range vs {
				l[i] = v
			}
			extra[k] = l
		}
		m["extra"] = extra
	}
	return m
}

// decision is the verdict of one validation, or of a whole evaluation when
// it failed as a whole.
type decision struct {
	deny    bool
	errored bool
	message string
	reason  metav1.StatusReason
}

type auditResult struct {
	key     string
	value   string
	publish bool
	err     string // non-empty: deny regardless of validationActions
}

type validateResult struct {
	decisions []decision
	audits    []auditResult
}

func (cp *compiledPolicy) errorDecision(msg string) validateResult {
	return validateResult{decisions: []decision{{deny: cp.failurePolicy != admissionregistrationv1.Ignore, errored: true, message: msg}}}
}

// validate evaluates one (policy, binding, param), as the API server's
// validator does.
func (st *requestState) validate(ctx context.Context, cp *compiledPolicy, matched schema.GroupVersionResource, vo *versionedObjects, param any, tr *PolicyTrace) validateResult {
	tr.Expressions = st.exprTraces(len(cp.matchConditions) + cp.traced)
	in := &celenv.Input{Params: param}
	if vo.object != nil {
		in.Object = vo.object
	}
	if vo.oldObject != nil {
		in.OldObject = vo.oldObject
	}
	var authzVal, rrVal ref.Val
	if cp.readsAuthorizer {
		authzVal, rrVal = st.authorizerValues(ctx)
	}

	if len(cp.matchConditions) > 0 {
		mcIn := *in
		mcIn.Request = st.lazyRequest(st.req.Resource, vo.kind)
		mcIn.Authorizer, mcIn.RequestResource = authzVal, rrVal
		matched, err := st.matchConditions(ctx, cp, &mcIn, vo, tr)
		if err != nil {
			tr.Outcome = Errored
			tr.Err = err
			return cp.errorDecision(err.Error())
		}
		if !matched {
			tr.Outcome = NotMatched
			return validateResult{}
		}
	}
	in.Request = st.lazyRequest(matched, vo.kind)
	if st.ns != nil {
		in.Namespace = celenv.Lazy(st.namespaceTrimmed)
	}
	if vo.err != nil {
		tr.Outcome, tr.Err = Errored, vo.err
		return cp.errorDecision(vo.err.Error())
	}

	// Validations, with the authorizer; then message expressions, on what
	// is left and without the authorizer.
	valIn := *in
	valIn.Authorizer, valIn.RequestResource = authzVal, rrVal
	var results []celenv.Result
	var messages []*celenv.Result
	var msgErr, err error
	for _, untracked := range st.costPasses() {
		results, messages, msgErr, err = st.evalValidations(ctx, cp, &valIn, in, untracked)
		if !errors.Is(err, celenv.ErrNeedsTracking) {
			break
		}
	}
	if err != nil {
		tr.Outcome, tr.Err = Errored, err
		return cp.errorDecision(err.Error())
	}
	for i := range results {
		tr.addCost(results[i])
		if messages[i] != nil {
			tr.addCost(*messages[i])
		}
	}

	// fold consumes out before the next evaluation reuses its slices.
	out := validateResult{decisions: scratch(&st.decisions, len(cp.validations))}
	tr.Outcome = Passed
	for i, v := range cp.validations {
		r := results[i]
		et := ExprTrace{Path: v.path, Cost: r.Cost, CostEstimated: r.Estimated}
		d := &out.decisions[i]
		switch {
		case r.Err != nil:
			d.deny, d.errored, d.message = cp.failurePolicy != admissionregistrationv1.Ignore, true, r.Err.Error()
			et.Outcome, et.Err = Errored, r.Err.Error()
		case msgErr != nil:
			d.deny, d.errored = cp.failurePolicy != admissionregistrationv1.Ignore, true
			d.message = fmt.Sprintf("failed messageExpression: %s", msgErr)
			et.Outcome, et.Err = Errored, d.message
		case r.Value != types.True:
			d.deny = true
			d.reason = metav1.StatusReasonInvalid
			if v.spec.Reason != nil {
				d.reason = *v.spec.Reason
			}
			d.message = failureMessage(v, messages[i])
			et.Outcome, et.Value = Failed, d.message
		default:
			et.Outcome, et.Value = Passed, "true"
		}
		if d.errored {
			tr.Outcome = Errored
		} else if d.deny && tr.Outcome != Errored {
			tr.Outcome = Failed
		}
		tr.Expressions = append(tr.Expressions, et)
	}
	// Message expressions, after the validations as they were evaluated.
	for i, v := range cp.validations {
		m := messages[i]
		if m == nil {
			continue
		}
		et := ExprTrace{Path: v.msgPath, Cost: m.Cost, CostEstimated: m.Estimated, Outcome: Passed}
		switch {
		case m.Value == nil && m.Err == nil:
			// Not evaluated: the validation passed, so the message is
			// never shown (celenv.Batch.Skip).
			et.Outcome = Skipped
		case m.Err != nil:
			et.Outcome, et.Err = Errored, m.Err.Error()
		default:
			et.Value = valueString(m.Value)
		}
		tr.Expressions = append(tr.Expressions, et)
	}

	// Audit annotations: a fresh budget, no authorizer, the whole namespace.
	if len(cp.audits) > 0 {
		audIn := *in
		if st.ns != nil {
			audIn.Namespace = celenv.Lazy(st.namespaceWhole)
		}
		var results []celenv.Result
		var err error
		for _, untracked := range st.costPasses() {
			results, err = st.evalBatch(ctx, cp.scope, &audIn, celenv.RuntimeBudget, untracked, cp.auditExprs)
			if !errors.Is(err, celenv.ErrNeedsTracking) {
				break
			}
		}
		if err != nil {
			tr.Outcome, tr.Err = Errored, err
			return cp.errorDecision(err.Error())
		}
		out.audits = scratch(&st.audits, len(cp.audits))
		for i, a := range cp.audits {
			r := results[i]
			tr.addCost(r)
			ar := &out.audits[i]
			ar.key = a.key
			et := ExprTrace{Path: a.path, Cost: r.Cost, CostEstimated: r.Estimated, Outcome: Passed}
			switch {
			case r.Err != nil:
				et.Outcome, et.Err = Errored, r.Err.Error()
				if cp.failurePolicy != admissionregistrationv1.Ignore {
					ar.err = r.Err.Error()
				}
			case r.Value.Type() == types.StringType:
				if s := strings.TrimSpace(string(r.Value.(types.String))); s != "" {
					ar.publish, ar.value = true, s
					et.Value = s
				}
			case r.Value.Type() == types.NullType:
				et.Value = "null"
			default:
				ar.err = fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. Return type must be either string or null.", a.expr.Expression(), r.Value.Type())
				et.Outcome, et.Err = Errored, ar.err
			}
			tr.Expressions = append(tr.Expressions, et)
		}
	}
	return out
}

// addCost adds what r charged to the entry's total.
func (t *PolicyTrace) addCost(r celenv.Result) {
	t.Cost += r.Cost
	t.CostEstimated = t.CostEstimated || r.Estimated
}

// Cost tracking passes: batches first skip cost tracking where the
// estimates allow; if the estimates would exhaust a budget
// (celenv.ErrNeedsTracking) the batch runs again tracked, so that every
// limit is decided on measured costs. Options.MeasureCost tracks from the
// start.
var (
	untrackedFirst = []bool{true, false}
	trackedOnly    = []bool{false}
)

func (st *requestState) costPasses() []bool {
	if st.e.opts.MeasureCost {
		return trackedOnly
	}
	return untrackedFirst
}

// scratch returns n zeroed elements of *buf, growing it as needed.
func scratch[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n, max(n, 2*cap(*buf)))
	}
	r := (*buf)[:n]
	clear(r)
	return r
}

// scratchResults returns n zeroed Results that stay valid until the next
// call: each policy evaluation consumes its results before the next starts.
func (st *requestState) scratchResults(n int) []celenv.Result {
	return scratch(&st.results, n)
}

// newBatch starts a batch, untracked where the estimates allow if asked.
func (st *requestState) newBatch(ctx context.Context, scope *celenv.Scope, in *celenv.Input, budget int64, untracked bool) *celenv.Batch {
	b := scope.NewBatch(ctx, in, budget)
	if untracked {
		b.Untracked(&st.sizes)
	}
	return b
}

// evalBatch evaluates progs in one batch.
func (st *requestState) evalBatch(ctx context.Context, scope *celenv.Scope, in *celenv.Input, budget int64, untracked bool, progs []*celenv.Program) ([]celenv.Result, error) {
	results := st.scratchResults(len(progs))
	batch := st.newBatch(ctx, scope, in, budget, untracked)
	defer batch.Release()
	for i, p := range progs {
		r, err := batch.Eval(p)
		if err != nil {
			return nil, err
		}
		results[i] = r
	}
	return results, nil
}

// evalValidations evaluates the validations with valIn, then the message
// expressions with msgIn on what is left of the budget. msgErr is the error
// that stopped the message expressions.
func (st *requestState) evalValidations(ctx context.Context, cp *compiledPolicy, valIn, msgIn *celenv.Input, untracked bool) (results []celenv.Result, messages []*celenv.Result, msgErr, err error) {
	n := len(cp.validations)
	buf := st.scratchResults(2 * n)
	results, msgResults := buf[:n:n], buf[n:]
	batch := st.newBatch(ctx, cp.scope, valIn, celenv.RuntimeBudget, untracked)
	defer batch.Release()
	for i, v := range cp.validations {
		r, err := batch.Eval(v.expr)
		if err != nil {
			return nil, nil, nil, err
		}
		results[i] = r
	}
	messages = scratch(&st.msgPtrs, n)
	var msgBatch *celenv.Batch
	for i, v := range cp.validations {
		if v.message == nil {
			continue
		}
		if msgBatch == nil {
			msgBatch = batch.Next(msgIn)
			defer msgBatch.Release()
		}
		if results[i].Err == nil && results[i].Value == types.True {
			// The message of a passing validation is never shown; only
			// its cost counts, and its bound covers that.
			r, skipped, err := msgBatch.Skip(v.message)
			if errors.Is(err, celenv.ErrNeedsTracking) {
				return nil, nil, nil, err
			}
			if skipped {
				msgResults[i] = r
				messages[i] = &msgResults[i]
				continue
			}
		}
		r, err := msgBatch.Eval(v.message)
		if errors.Is(err, celenv.ErrNeedsTracking) {
			return nil, nil, nil, err
		}
		if err != nil {
			msgErr = err
			break
		}
		msgResults[i] = r
		messages[i] = &msgResults[i]
	}
	return results, messages, msgErr, nil
}

// failureMessage chooses the message of a failed validation:
// messageExpression, then message, then the expression itself.
func failureMessage(v compiledValidation, msg *celenv.Result) string {
	var m string
	if msg != nil && msg.Err == nil && msg.Value != nil {
		if s, ok := msg.Value.(types.String); ok {
			m = strings.TrimSpace(string(s))
			if len(m) > celenv.MaxMessageExpressionLength || strings.Contains(m, "\n") {
				m = ""
			}
		}
	}
	if m == "" && v.spec.Message != "" {
		m = strings.TrimSpace(v.spec.Message)
	}
	if m == "" {
		m = "failed expression: " + strings.TrimSpace(v.spec.Expression)
	}
	return m
}

// matchConditions evaluates the policy's match conditions: a false condition
// wins over errors; otherwise errors fail or skip per failurePolicy.
func (st *requestState) matchConditions(ctx context.Context, cp *compiledPolicy, in *celenv.Input, vo *versionedObjects, tr *PolicyTrace) (bool, error) {
	fail := cp.failurePolicy == admissionregistrationv1.Fail
	ignore := cp.failurePolicy == admissionregistrationv1.Ignore
	if vo.err != nil {
		if fail {
			return false, vo.err
		}
		tr.Err = ignoredMatchError(ignore, vo.err)
		return !ignore, nil
	}
	var results []celenv.Result
	var err error
	for _, untracked := range st.costPasses() {
		results, err = st.evalBatch(ctx, cp.scope, in, celenv.MatchConditionsBudget, untracked, cp.matchConditions)
		if !errors.Is(err, celenv.ErrNeedsTracking) {
			break
		}
	}
	if err != nil {
		if fail {
			return false, err
		}
		tr.Err = ignoredMatchError(ignore, err)
		return !ignore, nil
	}
	for _, r := range results {
		tr.addCost(r)
	}
	var errs []error
	for i, r := range results {
		et := ExprTrace{Path: cp.mcPaths[i], Cost: r.Cost, CostEstimated: r.Estimated, Outcome: Passed}
		if r.Err != nil {
			et.Outcome, et.Err = Errored, r.Err.Error()
			errs = append(errs, r.Err)
		} else if r.Value == types.False {
			et.Outcome, et.Value = Failed, "false"
			tr.Expressions = append(tr.Expressions, et)
			return false, nil
		} else {
			et.Value = valueString(r.Value)
		}
		tr.Expressions = append(tr.Expressions, et)
	}
	if len(errs) > 0 {
		if fail {
			return false, aggregate(errs)
		}
		tr.Err = ignoredMatchError(ignore, aggregate(errs))
		if ignore {
			return false, nil
		}
	}
	return true, nil
}

// ignoredMatchError explains, for the trace, a match condition error that
// did not fail the request: under Ignore the policy is skipped, under an
// unrecognized failurePolicy evaluation goes on.
func ignoredMatchError(ignore bool, err error) error {
	if ignore {
		return fmt.Errorf("match condition error ignored under failurePolicy Ignore; policy skipped: %w", err)
	}
	return fmt.Errorf("match condition error ignored; evaluation continues: %w", err)
}

// aggregate joins errors as apimachinery's NewAggregate prints them.
func aggregate(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msgs := make([]string, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		if m := e.Error(); !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 1 {
		return errors.New(msgs[0])
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

func valueString(v ref.Val) string {
	switch t := v.(type) {
	case nil:
		return ""
	case types.Bool:
		return strconv.FormatBool(bool(t))
	case types.String:
		return string(t)
	}
	return fmt.Sprint(v.Value())
}

// fold applies one evaluation's results to the request, as the dispatcher
// does: decisions through the binding's validationActions, audit annotation
// errors as denials regardless of them.
func (st *requestState) fold(cp *compiledPolicy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, r validateResult, collector *audit.Collector, tr *PolicyTrace) {
	for i, d := range r.decisions {
		if !d.deny {
			continue
		}
		for _, action := range b.Spec.ValidationActions {
			switch action {
			case admissionregistrationv1.Deny:
				st.denied = append(st.denied, deniedDecision{policy: cp.policy.Name, binding: b.Name, message: d.message, reason: d.reason})
			case admissionregistrationv1.Audit:
				st.failures = append(st.failures, audit.ValidationFailure{
					Message: d.message, Policy: b.Spec.PolicyName, Binding: b.Name,
					ExpressionIndex: i, ValidationActions: b.Spec.ValidationActions,
				})
			case admissionregistrationv1.Warn:
				st.warnings.add(fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", cp.policy.Name, b.Name, d.message))
			}
		}
	}
	for _, a := range r.audits {
		switch {
		case a.err != "":
			st.denied = append(st.denied, deniedDecision{policy: cp.policy.Name, binding: b.Name, message: a.err})
			tr.Outcome = Errored
		case a.publish:
			collector.Add(a.key, a.value)
		}
	}
}
