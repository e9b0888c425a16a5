package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/vapkit/vapkit/matching"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

const replicaPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  validations:
  - expression: "object.spec.replicas <= LIMIT"
    message: "at most LIMIT replicas"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec:
  policyName: max-replicas
  validationActions: [Deny]
`

// paramPolicy needs a ConfigMap param, so that evaluation calls the
// params.Source, which the tests block.
const paramPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: with-params}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"]}
  validations:
  - expression: "true"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: with-params}
spec:
  policyName: with-params
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
  validationActions: [Deny]
`

// fixed serves one evaluator.
type fixed struct{ ev *policy.Evaluator }

func (f fixed) Current() (*policy.Evaluator, int64) { return f.ev, 1 }

func compile(t *testing.T, manifests string, opts policy.Options) *policy.Evaluator {
	t.Helper()
	m, err := manifest.Load([]byte(manifests), "policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Namespaces == nil {
		opts.Namespaces = assumedNamespaces(nil)
	}
	ev, err := policy.Compile(m.Policies, m.Bindings, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func deploymentRequest(uid string, replicas int) *admissionv1.AdmissionRequest {
	obj := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":` +
		itoa(replicas) + `,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}}}}}`
	return &admissionv1.AdmissionRequest{
		UID:       types.UID(uid),
		Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Name:      "web",
		Namespace: "default",
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: []byte(obj)},
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// blockingParams is a params.Source that signals entry and then blocks
// until release is closed or, if honourCtx, ctx is done.
func blockingParams(entered chan<- struct{}, release <-chan struct{}, honourCtx bool) params.Source {
	var once sync.Once
	return params.SourceFunc(func(ctx context.Context, q params.Query) ([]runtime.Object, error) {
		once.Do(func() { close(entered) })
		if honourCtx {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
			}
		} else {
			<-release
		}
		return nil, nil
	})
}

// TestHandlerDeadline checks that a request whose evaluation outlives the
// deadline is answered per failurePolicy.
func TestHandlerDeadline(t *testing.T) {
	tests := []struct {
		fp          admissionregistrationv1.FailurePolicyType
		wantAllowed bool
	}{
		{admissionregistrationv1.Fail, false},
		{admissionregistrationv1.Ignore, true},
	}
	for _, tc := range tests {
		t.Run(string(tc.fp), func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			defer close(release)
			ev := compile(t, paramPolicy, policy.Options{Params: blockingParams(entered, release, true)})
			h := NewHandler(fixed{ev}, HandlerOptions{Timeout: 20 * time.Millisecond, FailurePolicy: tc.fp})
			resp := h.Review(t.Context(), deploymentRequest("u1", 1))
			<-entered // the evaluation did reach the blocking source
			if resp.Allowed != tc.wantAllowed || resp.UID != "u1" {
				t.Fatalf("Review() = %+v, want allowed %t for uid u1", resp, tc.wantAllowed)
			}
			if !tc.wantAllowed && (resp.Result.Code != http.StatusGatewayTimeout || !strings.Contains(resp.Result.Message, "did not finish within 20ms")) {
				t.Errorf("Review() result = %+v, want 504 naming the deadline", resp.Result)
			}
		})
	}
}

// TestHandlerCap checks that a request finding no slot under the
// concurrency cap before its deadline is answered per failurePolicy.
func TestHandlerCap(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	ev := compile(t, paramPolicy, policy.Options{Params: blockingParams(entered, release, false)})
	h := NewHandler(fixed{ev}, HandlerOptions{Timeout: 50 * time.Millisecond, MaxInFlight: 1})
	first := make(chan *admissionv1.AdmissionResponse)
	go func() { first <- h.Review(context.Background(), deploymentRequest("first", 1)) }()
	<-entered // the first request holds the only slot
	resp := h.Review(t.Context(), deploymentRequest("second", 1))
	close(release)
	<-first
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests || !strings.Contains(resp.Result.Message, "too many requests in flight (cap 1)") {
		t.Errorf("Review(second) = %+v, want denied with 429 naming the cap", resp)
	}
}

// TestServeHTTP checks the review decoding defects (413, uid, trailing
// data), one log line per request and the metrics.
func TestServeHTTP(t *testing.T) {
	ev := compile(t, strings.ReplaceAll(replicaPolicy, "LIMIT", "3"), policy.Options{Namespaces: matching.NewNamespaceMap(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})})
	var logs bytes.Buffer
	metrics := NewMetrics()
	if err := metrics.Register(prometheus.NewRegistry()); err != nil {
		t.Fatal(err)
	}
	h := NewHandler(fixed{ev}, HandlerOptions{MaxReviewBytes: 4096, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Metrics: metrics})
	review := func(req *admissionv1.AdmissionRequest) string {
		b, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	noUID := deploymentRequest("", 1)
	tests := []struct {
		name     string
		body     string
		wantCode int
		wantBody string
	}{
		{"allowed", review(deploymentRequest("ok", 2)), 200, `"uid":"ok","allowed":true`},
		{"denied", review(deploymentRequest("no", 5)), 200, `"uid":"no","allowed":false,"status":{"metadata":{},"status":"Failure","message":"deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'max-replicas'`},
		{"namespace missing is the server's 404", review(func() *admissionv1.AdmissionRequest {
			r := deploymentRequest("ns", 5)
			r.Namespace = "prod"
			return r
		}()), 200, `namespaces \"prod\" not found`},
		{"oversized body", review(deploymentRequest("big", 1)) + strings.Repeat(" ", 5000), 413, "larger than the limit of 4096 bytes"},
		{"no uid", review(noUID), 400, "request.uid is required"},
		{"trailing data", review(deploymentRequest("t", 1)) + `{}`, 400, "unexpected data after the object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/validate", strings.NewReader(tc.body)))
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("POST = %d %s, want %d containing %s", rec.Code, rec.Body, tc.wantCode, tc.wantBody)
			}
			if n := strings.Count(logs.String(), "\n"); n != 1 {
				t.Errorf("log = %q, want exactly one line", logs.String())
			}
		})
	}
	if got := testutil.ToFloat64(metrics.Decisions.WithLabelValues("max-replicas", "Failed")); got != 1 {
		t.Errorf("decisions{max-replicas,Failed} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(metrics.Decisions.WithLabelValues("max-replicas", "Passed")); got != 1 {
		t.Errorf("decisions{max-replicas,Passed} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(metrics.Requests.WithLabelValues("invalid")); got != 3 {
		t.Errorf("requests{invalid} = %v, want 3", got)
	}
	if got := testutil.CollectAndCount(metrics.Latency); got != 1 {
		t.Errorf("latency histograms = %d, want 1", got)
	}
}

// TestHandle checks the controller-runtime entry point.
func TestHandle(t *testing.T) {
	ev := compile(t, strings.ReplaceAll(replicaPolicy, "LIMIT", "3"), policy.Options{})
	h := NewHandler(Static(ev), HandlerOptions{})
	resp := h.Handle(t.Context(), admission.Request{AdmissionRequest: *deploymentRequest("u1", 5)})
	if resp.Allowed || resp.UID != "u1" || resp.Result == nil || !strings.Contains(resp.Result.Message, "at most 3 replicas") {
		t.Errorf("Handle(5 replicas) = %+v, want denied for uid u1", resp.AdmissionResponse)
	}
	resp = h.Handle(t.Context(), admission.Request{AdmissionRequest: *deploymentRequest("", 1)})
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusBadRequest || !strings.Contains(resp.Result.Message, "request.uid is required") {
		t.Errorf("Handle(no uid) = %+v, want 400 naming the uid", resp.AdmissionResponse)
	}
	dry := NewHandler(Static(ev), HandlerOptions{DryRun: true})
	resp = dry.Handle(t.Context(), admission.Request{AdmissionRequest: *deploymentRequest("u2", 5)})
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.HasPrefix(resp.Warnings[0], "dry-run: would deny: ") {
		t.Errorf("dry-run Handle(5 replicas) = %+v, want allowed with the denial as a warning", resp.AdmissionResponse)
	}
}
