// Per-request state: what one Evaluate call computes and remembers, pooled
// for its scratch buffers.

package policy

import (
	"sync"

	"github.com/google/cel-go/common/types/ref"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vapkit/vapkit/audit"
	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/matching"
)

// requestState is everything one Evaluate call computes and remembers:
// the request's own values (perRequest, zeroed by release) and scratch
// buffers kept from request to request for their capacity.
type requestState struct {
	perRequest

	versioned []*versionedObjects // one per kind; requests rarely need two
	params    map[runtime.Object]any

	// requestVals are the request values built, per resource and kind;
	// a request rarely needs more than one.
	requestVals []requestVal
	// lazies[:nLazy] are the lazy request values handed out, one per
	// resource and kind (most policies of a request see the same); the
	// rest are kept for later requests.
	lazies []*lazyRequest
	// nsTrimmedLazy and nsWholeLazy are lazyNamespace's and
	// lazyNamespaceWhole's values, kept for later requests.
	nsTrimmedLazy, nsWholeLazy func() any
	// sess is shared by the request's batches.
	sess celenv.Session
	// msgPtrs, msgAt, decisions and audits are reused by every policy
	// evaluation; their lengths are the most any evaluation used, so
	// that release clears only that.
	msgPtrs   []*celenv.Result
	msgAt     []int
	decisions []decision
	audits    []auditResult

	// cands holds the candidate policies the label index keeps.
	cands []int

	denied   []deniedDecision
	failures []audit.ValidationFailure

	// sc is the matching scratch of scOwner, kept with the state: taking
	// it from the evaluator's pool on every request costs more.
	sc      *matching.Scratch
	scOwner *Evaluator
}

// perRequest is what a requestState holds for one request only.
type perRequest struct {
	e     *Evaluator
	req   *Request
	attrs matching.Attributes
	// tracked: evaluate with cost tracking from the start (the mutating
	// phase, whose objects change between evaluations).
	tracked bool

	nLazy int // see requestState.lazies
	// vo0 holds the first entry of versioned.
	vo0         versionedObjects
	options     any
	optionsDone bool

	nsLoaded           bool
	ns                 *corev1.Namespace
	nsWhole, nsTrimmed map[string]any // converted on first use
	authzVal, rrVal    ref.Val

	// out is the request's Decision once allocated (see startTrace).
	out         *Decision
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
// capacity of a recycled one's scratch. release left everything else
// zero, so only the request's own fields are written: assigning the whole
// struct would pass each of its pointer words through the write barrier
// whenever the garbage collector is marking.
func newRequestState(e *Evaluator, req *Request) *requestState {
	st := statePool.Get().(*requestState)
	st.e, st.req = e, req
	st.attrs = matching.Attributes{
		Operation:   string(req.Operation),
		Resource:    req.Resource,
		SubResource: req.SubResource,
		Kind:        req.Kind,
		Name:        req.Name,
		Namespace:   req.Namespace,
		Object:      req.Object,
		OldObject:   req.OldObject,
	}
	st.versioned, st.requestVals = st.versioned[:0], st.requestVals[:0]
	st.cands, st.denied, st.failures = st.cands[:0], st.denied[:0], st.failures[:0]
	return st
}

// release clears what st references, so that the pool pins no request's
// values, and returns st to the pool. Only what the request used is
// cleared: assigning the whole struct would pass each of its pointer words,
// scratch included, through the write barrier whenever the garbage
// collector is marking.
func (st *requestState) release() {
	clear(st.versioned)
	if len(st.params) > 0 {
		clear(st.params)
	}
	clear(st.requestVals)
	st.sess.Reset()
	clear(st.msgPtrs)
	clear(st.decisions)
	clear(st.audits)
	clear(st.denied)
	clear(st.failures)
	for _, l := range st.lazies[:st.nLazy] {
		l.key = requestKey{}
	}
	st.perRequest = perRequest{}
	statePool.Put(st)
}

// scratch returns the matching scratch for st.e's policies, the one st
// kept when it last served the same evaluator.
func (st *requestState) scratch() *matching.Scratch {
	if st.scOwner != st.e {
		if st.sc != nil {
			st.scOwner.scratches.Put(st.sc)
		}
		st.sc, st.scOwner = st.e.scratches.Get().(*matching.Scratch), st.e
	}
	return st.sc
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

// scratch returns n zeroed elements of *buf, growing it as needed; *buf's
// length stays the most ever used, which release clears.
func scratch[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n, max(n, 2*cap(*buf)))
	}
	if len(*buf) < n {
		*buf = (*buf)[:n]
	}
	r := (*buf)[:n]
	clear(r)
	return r
}
