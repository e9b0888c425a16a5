package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// Source supplies the evaluator to serve; [PolicySync] and [DirSource]
// implement it. Current must be safe for concurrent use and return a nil
// evaluator only before the first successful compile.
type Source interface {
	Current() (ev *policy.Evaluator, generation int64)
}

// Defaults of [HandlerOptions].
const (
	// DefaultTimeout is the per-request deadline: below the API server's
	// default webhook timeout of 10 s, so that the webhook, not the API
	// server, answers a request that runs out of time, and answers it per
	// the configured failurePolicy.
	DefaultTimeout = 8 * time.Second
	// DefaultMaxInFlight caps the requests evaluated at once.
	DefaultMaxInFlight = 64
)

// HandlerOptions configure [NewHandler]; the zero value is valid.
type HandlerOptions struct {
	// Timeout is the deadline of each request, from its arrival; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxInFlight caps concurrent evaluations; a request that finds no
	// slot before its deadline is answered per FailurePolicy. 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// FailurePolicy answers requests that cannot be decided in time or at
	// all: Fail (the default) denies them, Ignore allows them. Set it to
	// the failurePolicy of the ValidatingWebhookConfiguration, which the
	// API server applies itself when the webhook does not answer.
	FailurePolicy admissionregistrationv1.FailurePolicyType
	// DryRun never denies: denials become warnings "dry-run: would deny:
	// <message>" on an allowed response (shadow mode).
	DryRun bool
	// MaxReviewBytes bounds a review read by ServeHTTP; 0 means
	// policy.DefaultMaxReviewBytes. Larger bodies get 413.
	MaxReviewBytes int64
	// Logger receives one line per request; nil discards them.
	Logger *slog.Logger
	// Metrics records requests and decisions; nil records nothing.
	Metrics *Metrics
}

// Handler answers admission requests with the evaluator of a [Source]. It
// is a controller-runtime admission.Handler and an http.Handler (for a
// plain HTTPS server). Safe for concurrent use.
type Handler struct {
	src  Source
	opts HandlerOptions
	sem  chan struct{}
	now  func() time.Time
}

var (
	_ admission.Handler = (*Handler)(nil)
	_ http.Handler      = (*Handler)(nil)
)

// NewHandler returns a handler serving src's current evaluator.
func NewHandler(src Source, opts HandlerOptions) *Handler {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.FailurePolicy == "" {
		opts.FailurePolicy = admissionregistrationv1.Fail
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{src: src, opts: opts, sem: make(chan struct{}, opts.MaxInFlight), now: time.Now}
}

// Handle implements admission.Handler for controller-runtime's webhook
// server, which decodes the review (with its own size limit) and encodes
// the answer. A request without a uid is answered 400, as ServeHTTP does:
// the response could not be matched to it.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.UID == "" {
		h.opts.Metrics.request("invalid", -1, nil)
		h.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "bad review", slog.Int("code", http.StatusBadRequest), slog.String("error", "request.uid is required"))
		return admission.Errored(http.StatusBadRequest, errors.New("invalid AdmissionReview: request.uid is required"))
	}
	return admission.Response{AdmissionResponse: *h.Review(ctx, &req.AdmissionRequest)}
}

// Review answers one request: within the deadline and the concurrency cap,
// with the current evaluator, logging one line and recording metrics.
func (h *Handler) Review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	start := h.now()
	ctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	defer cancel()
	ev, gen := h.src.Current()
	resp, d, outcome := h.decide(ctx, ev, req)
	if h.opts.DryRun && !resp.Allowed {
		resp = dryRun(resp)
	}
	elapsed := h.now().Sub(start)
	h.opts.Metrics.request(outcome, elapsed.Seconds(), d)
	attrs := []slog.Attr{
		slog.String("uid", string(req.UID)), slog.String("operation", string(req.Operation)),
		slog.String("resource", req.Resource.Resource), slog.String("namespace", req.Namespace), slog.String("name", req.Name),
		slog.String("outcome", outcome), slog.Bool("allowed", resp.Allowed), slog.Int64("generation", gen),
		slog.Duration("duration", elapsed),
	}
	if resp.Result != nil {
		attrs = append(attrs, slog.Int("code", int(resp.Result.Code)), slog.String("message", resp.Result.Message))
	}
	if len(resp.Warnings) > 0 {
		attrs = append(attrs, slog.Int("warnings", len(resp.Warnings)))
	}
	h.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "admission", attrs...)
	return resp
}

// decide evaluates req, or answers per failurePolicy when it cannot.
func (h *Handler) decide(ctx context.Context, ev *policy.Evaluator, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, *policy.Decision, string) {
	if ev == nil {
		return h.failure(req, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "no policies loaded yet"), nil, "unavailable"
	}
	select {
	case h.sem <- struct{}{}:
		defer func() { <-h.sem }()
	case <-ctx.Done():
		msg := fmt.Sprintf("too many requests in flight (cap %d) until the deadline of %v", h.opts.MaxInFlight, h.opts.Timeout)
		return h.failure(req, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, msg), nil, "overloaded"
	}
	pr, err := policy.RequestFromAdmission(req)
	if err != nil {
		return errored(req, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error()), nil, "invalid"
	}
	d, err := ev.Evaluate(ctx, pr)
	switch {
	case err != nil && ctx.Err() != nil:
		msg := fmt.Sprintf("evaluation did not finish within %v", h.opts.Timeout)
		return h.failure(req, http.StatusGatewayTimeout, metav1.StatusReasonTimeout, msg), nil, "timeout"
	case err != nil:
		return errored(req, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error()), nil, "invalid"
	}
	resp := d.AdmissionResponse(req.UID)
	if resp.Allowed {
		return resp, d, "allowed"
	}
	return resp, d, "denied"
}

// failure answers a request that could not be decided: denied under
// failurePolicy Fail, allowed under Ignore (with no warning, as the API
// server allows a failed webhook call under Ignore).
func (h *Handler) failure(req *admissionv1.AdmissionRequest, code int32, reason metav1.StatusReason, msg string) *admissionv1.AdmissionResponse {
	if h.opts.FailurePolicy == admissionregistrationv1.Ignore {
		return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	}
	return errored(req, code, reason, "vapkit webhook: "+msg)
}

func errored(req *admissionv1.AdmissionRequest, code int32, reason metav1.StatusReason, msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: req.UID, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg,
	}}
}

// dryRun turns a denial into an allowed response with a warning.
func dryRun(resp *admissionv1.AdmissionResponse) *admissionv1.AdmissionResponse {
	out := *resp
	msg := "request denied"
	if out.Result != nil {
		msg = out.Result.Message
	}
	out.Allowed, out.Result = true, nil
	out.Warnings = append(slices.Clone(out.Warnings), "dry-run: would deny: "+msg)
	return &out
}

// ServeHTTP answers a POSTed admission.k8s.io/v1 AdmissionReview: 413 for
// a body over the size limit, 400 for anything but one review with a
// request and a uid (trailing data included), 415 for another content
// type.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			http.Error(w, fmt.Sprintf("unsupported content type %q, want application/json", ct), http.StatusUnsupportedMediaType)
			return
		}
	}
	review, err := policy.ReadAdmissionReview(r.Body, h.opts.MaxReviewBytes)
	if err != nil {
		code := http.StatusBadRequest
		if le := new(manifest.LimitError); errors.As(err, &le) {
			code = http.StatusRequestEntityTooLarge
		}
		h.opts.Metrics.request("invalid", -1, nil)
		h.opts.Logger.LogAttrs(r.Context(), slog.LevelWarn, "bad review", slog.Int("code", code), slog.String("error", err.Error()))
		http.Error(w, err.Error(), code)
		return
	}
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: h.Review(r.Context(), review.Request)}
	body, err := json.Marshal(out)
	if err != nil {
		http.Error(w, "encoding AdmissionReview: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// Static returns a [Source] that always serves ev as generation 1, for
// evaluators compiled once (tests, CLIs, fixed policy sets).
func Static(ev *policy.Evaluator) Source { return staticSource{ev} }

type staticSource struct{ ev *policy.Evaluator }

func (s staticSource) Current() (*policy.Evaluator, int64) { return s.ev, 1 }
