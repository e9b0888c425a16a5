package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/vapkit/vapkit/policy/casefile"
	"github.com/vapkit/vapkit/policy/manifest"
)

// tlsFiles writes a fresh self-signed certificate for 127.0.0.1 and
// localhost into dir and returns the file names and a pool trusting it.
func tlsFiles(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "vapkit-webhook-test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// testServer is a webhook listening on loopback TLS.
type testServer struct {
	url, metricsURL string
	client          *http.Client
	logs            *syncBuffer
}

// syncBuffer collects the JSON log lines of a running server.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// start runs the command in directory mode on 127.0.0.1 until the test
// ends; extra are more flags.
func start(t *testing.T, policyDir string, dryRun bool, extra ...string) *testServer {
	t.Helper()
	certFile, keyFile, pool := tlsFiles(t, t.TempDir())
	args := append([]string{"-dir", policyDir, "-tls-cert", certFile, "-tls-key", keyFile,
		"-addr", "127.0.0.1:0", "-metrics-addr", "127.0.0.1:0", "-poll", "0", "-dry-run=" + strconv.FormatBool(dryRun)}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	done := make(chan error, 1)
	logs := &syncBuffer{}
	go func() { done <- run(ctx, args, logs, ready) }()
	var addrs [2]string
	select {
	case addrs = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("run(%q) error = %v", args, err)
	}
	client := &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		Timeout:   30 * time.Second,
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run() error = %v", err)
		}
		client.CloseIdleConnections()
	})
	return &testServer{url: "https://" + addrs[0], metricsURL: "http://" + addrs[1], client: client, logs: logs}
}

// post sends body to path and returns the status code and body.
func (ts *testServer) do(t *testing.T, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, ts.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// validate posts review and decodes the answer.
func (ts *testServer) validate(t *testing.T, review *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	code, out := ts.do(t, http.MethodPost, "/validate", "application/json", body)
	if code != http.StatusOK {
		t.Fatalf("POST /validate = %d %s, want 200", code, out)
	}
	var got admissionv1.AdmissionReview
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("decoding response %s: %v", out, err)
	}
	if got.APIVersion != "admission.k8s.io/v1" || got.Kind != "AdmissionReview" {
		t.Errorf("response type = %s %s, want admission.k8s.io/v1 AdmissionReview", got.APIVersion, got.Kind)
	}
	if got.Response == nil {
		t.Fatalf("response %s has no response", out)
	}
	return got.Response
}

// writeCluster writes the cluster objects of a case into dir, as a user
// would keep them: one file per kind of object. Namespaced params written
// without a namespace live in default (the case format's rule) and get it
// written out, since the webhook defaults nothing.
func writeCluster(t *testing.T, dir string, c *casefile.Case) {
	t.Helper()
	mapper, err := manifest.NewResourceMapper(c.CRDs...)
	if err != nil {
		t.Fatal(err)
	}
	var ps []runtime.Object
	for _, p := range c.Params {
		if u, ok := p.(*unstructured.Unstructured); ok && u.GetNamespace() == "" {
			if _, namespaced, err := mapper.ResourceFor(u.GroupVersionKind()); err == nil && namespaced {
				u = u.DeepCopy()
				u.SetNamespace("default")
				p = u
			}
		}
		ps = append(ps, p)
	}
	files := map[string][]runtime.Object{"params.yaml": ps}
	for _, p := range c.Policies {
		files["policies.yaml"] = append(files["policies.yaml"], p)
	}
	for _, b := range c.Bindings {
		files["bindings.yaml"] = append(files["bindings.yaml"], b)
	}
	for _, n := range c.Namespaces {
		files["namespaces.yaml"] = append(files["namespaces.yaml"], n)
	}
	for _, crd := range c.CRDs {
		files["crds.json"] = append(files["crds.json"], crd)
	}
	for name, objs := range files {
		if len(objs) == 0 {
			continue
		}
		var b bytes.Buffer
		for _, o := range objs {
			o = withKind(t, o)
			var data []byte
			if strings.HasSuffix(name, ".json") {
				data, err = json.Marshal(o)
			} else {
				b.WriteString("---\n")
				data, err = yaml.Marshal(o)
			}
			if err != nil {
				t.Fatal(err)
			}
			b.Write(data)
			b.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// withKind returns o with apiVersion and kind set.
func withKind(t *testing.T, o runtime.Object) runtime.Object {
	t.Helper()
	if !o.GetObjectKind().GroupVersionKind().Empty() {
		return o
	}
	gvks, _, err := scheme.Scheme.ObjectKinds(o)
	if err != nil {
		t.Fatalf("kind of %T: %v", o, err)
	}
	o = o.DeepCopyObject()
	o.GetObjectKind().SetGroupVersionKind(gvks[0])
	return o
}

// asSent returns the review as the API server sends it: with its options
// object, which it always passes for CREATE, UPDATE and DELETE.
func asSent(r *admissionv1.AdmissionReview) *admissionv1.AdmissionReview {
	r = r.DeepCopy()
	if r.Request.Options.Raw != nil || r.Request.Options.Object != nil {
		return r
	}
	kind := map[admissionv1.Operation]string{
		admissionv1.Create: "CreateOptions", admissionv1.Update: "UpdateOptions", admissionv1.Delete: "DeleteOptions",
	}[r.Request.Operation]
	if kind != "" {
		r.Request.Options.Raw = []byte(`{"apiVersion":"meta.k8s.io/v1","kind":"` + kind + `"}`)
	}
	return r
}

// TestCases serves each shared conformance case's cluster from a directory
// and checks that the webhook answers the case's AdmissionReview as the API
// server does, and never denies in dry-run mode.
func TestCases(t *testing.T) {
	for _, f := range webhookCases(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := casefile.ParseFile(f)
			if err != nil {
				t.Fatalf("ParseFile() error = %v", err)
			}
			data, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			want, err := casefile.ParseExpected(data)
			if err != nil {
				t.Fatalf("ParseExpected() error = %v", err)
			}
			dir := t.TempDir()
			writeCluster(t, dir, c)
			review := asSent(c.AdmissionReview)

			t.Run("enforce", func(t *testing.T) {
				resp := start(t, dir, false).validate(t, review)
				if resp.UID != review.Request.UID {
					t.Errorf("uid = %q, want %q", resp.UID, review.Request.UID)
				}
				got := casefile.Project(resp)
				outcomes := want.Outcomes()
				if !slices.ContainsFunc(outcomes, func(o casefile.Comparable) bool { return cmp.Equal(o, got) }) {
					t.Errorf("response mismatch (-want +got):\n%s", cmp.Diff(outcomes[0], got))
				}
			})
			t.Run("dry-run", func(t *testing.T) {
				resp := start(t, dir, true).validate(t, review)
				if !resp.Allowed || resp.Result != nil {
					t.Errorf("dry-run response = allowed %t, result %v; want allowed, no result", resp.Allowed, resp.Result)
				}
				if !want.Response.Allowed && len(resp.Warnings) == 0 {
					t.Errorf("dry-run warnings = none, want the denial reported as a warning")
				}
			})
		})
	}
}

// representativeCases are the shared cases -short serves: denials with
// warnings and audit annotations, audit only, params and CRDs read from
// the directory, namespace objects and a missing namespace, order-dependent
// outcomes, DELETE and CONNECT.
var representativeCases = []string{
	"actions-audit-only",
	"actions-deny-warn-audit",
	"connect-pod-exec",
	"delete-old-object",
	"match-policy-equivalent-crd",
	"multiple-policies-order-dependent",
	"namespace-not-found",
	"namespace-object-use",
	"params-by-selector",
	"seed-replica-limit-params-by-name",
}

// webhookCases returns the shared cases TestCases serves: with -short the
// representative ones, else every case but those that need an authorizer
// (the webhook has none) and the cost-* ones, which spend whole cost limits
// (seconds each, minutes under the race detector). The policy package,
// which owns the cases, runs them all.
func webhookCases(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "..", "policy", "testdata", "cases")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases found")
	}
	var out []string
	if testing.Short() {
		for _, name := range representativeCases {
			f := filepath.Join(dir, name+".yaml")
			if !slices.Contains(files, f) {
				t.Fatalf("representative case %s is not in %s", name, dir)
			}
			out = append(out, f)
		}
		return out
	}
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "cost-") {
			continue
		}
		c, err := casefile.ParseFile(f)
		if err != nil {
			t.Fatalf("ParseFile() error = %v", err)
		}
		if c.Authorizer == nil {
			out = append(out, f)
		}
	}
	return out
}

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

func writePolicy(t *testing.T, dir, limit string, mtime time.Time) {
	t.Helper()
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(replicaPolicy, "LIMIT", limit)), 0o600); err != nil {
		t.Fatal(err)
	}
	// Set the time explicitly: two writes within the file system's
	// timestamp granularity must still look different.
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func deploymentReview(uid string, replicas int) *admissionv1.AdmissionReview {
	// As the API server sends it: defaulted when it was decoded.
	obj := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":` +
		strconv.Itoa(replicas) + `,"selector":{"matchLabels":{"app":"web"}},` +
		`"progressDeadlineSeconds":600,"revisionHistoryLimit":10,` +
		`"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},` +
		`"template":{"metadata":{"labels":{"app":"web"}},"spec":{"dnsPolicy":"ClusterFirst","restartPolicy":"Always",` +
		`"schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}`
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("uid-" + uid),
			Kind:      metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
			Resource:  metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			Name:      "web",
			Namespace: "default",
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: []byte(obj)},
			Options:   runtime.RawExtension{Raw: []byte(`{"apiVersion":"meta.k8s.io/v1","kind":"CreateOptions"}`)},
		},
	}
}

const defaultNamespace = `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default","labels":{"kubernetes.io/metadata.name":"default"}}}`

// TestDryRun checks that shadow mode reports a Deny binding's failures as
// the warnings of a Warn binding.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "namespaces.json"), []byte(defaultNamespace), 0o600); err != nil {
		t.Fatal(err)
	}
	writePolicy(t, dir, "3", time.Now())
	ts := start(t, dir, true)
	resp := ts.validate(t, deploymentReview("dry", 5))
	want := &admissionv1.AdmissionResponse{
		UID:      "uid-dry",
		Allowed:  true,
		Warnings: []string{"Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas': at most 3 replicas"},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("dry-run response mismatch (-want +got):\n%s", diff)
	}
}

// TestBadRequests checks the answers to requests that are not admission
// reviews.
func TestBadRequests(t *testing.T) {
	dir := t.TempDir()
	writePolicy(t, dir, "3", time.Now())
	ts := start(t, dir, false, "-max-review-bytes", "4096")
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		body        string
		wantCode    int
		wantBody    string
	}{
		{"get validate", http.MethodGet, "/validate", "", "", http.StatusMethodNotAllowed, "method not allowed"},
		{"post healthz", http.MethodPost, "/healthz", "", "", http.StatusMethodNotAllowed, "method not allowed"},
		{"not json", http.MethodPost, "/validate", "application/json", "{", http.StatusBadRequest, "invalid AdmissionReview: decoding"},
		{"no uid", http.MethodPost, "/validate", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`, http.StatusBadRequest, "request.uid is required"},
		{"trailing data", http.MethodPost, "/validate", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}} {}`, http.StatusBadRequest, "unexpected data after the object"},
		{"oversized body", http.MethodPost, "/validate", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}` + strings.Repeat(" ", 5000), http.StatusRequestEntityTooLarge, "larger than the limit of 4096 bytes"},
		{"wrong content type", http.MethodPost, "/validate", "text/plain", "{}", http.StatusUnsupportedMediaType, "unsupported content type"},
		{"v1beta1 review", http.MethodPost, "/validate", "application/json", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{}}`, http.StatusBadRequest, "want admission.k8s.io/v1 AdmissionReview"},
		{"no request", http.MethodPost, "/validate", "application/json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, http.StatusBadRequest, "request is missing"},
		{"unknown path", http.MethodGet, "/mutate", "", "", http.StatusNotFound, "not found"},
		{"invalid request", http.MethodPost, "/validate", "application/json",
			`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","operation":"PATCH"}}`,
			http.StatusOK, `"uid":"u1","allowed":false,"status":{"metadata":{},"status":"Failure","message":"invalid request: `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := ts.do(t, tc.method, tc.path, tc.contentType, []byte(tc.body))
			if code != tc.wantCode || !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("%s %s = %d %q, want %d containing %q", tc.method, tc.path, code, body, tc.wantCode, tc.wantBody)
			}
		})
	}
	// The invalid reviews and the one evaluated request are counted.
	resp, err := ts.client.Get(ts.metricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`vapkit_webhook_requests_total{outcome="invalid"} 7`, "vapkit_webhook_request_duration_seconds_count 1", "vapkit_webhook_reload_generation 1"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
}

// TestRunErrors checks the command line and startup failures.
func TestRunErrors(t *testing.T) {
	empty := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"directory without TLS", []string{"-dir", empty}, "directory mode needs -tls-cert and -tls-key"},
		{"extra argument", []string{"-dir", empty, "-tls-cert", "c", "-tls-key", "k", "x"}, `unexpected arguments: ["x"]`},
		{"negative poll", []string{"-dir", empty, "-tls-cert", "c", "-tls-key", "k", "-poll", "-1s"}, "-poll not negative"},
		{"bad failure policy", []string{"-failure-policy", "Maybe"}, "-failure-policy must be Fail or Ignore"},
		{"empty directory", []string{"-dir", empty, "-tls-cert", "c", "-tls-key", "k"}, "no *.yaml, *.yml or *.json files"},
		{"missing directory", []string{"-dir", filepath.Join(empty, "nope"), "-tls-cert", "c", "-tls-key", "k"}, "no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t.Context(), tc.args, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(%q) error = %v, want containing %q", tc.args, err, tc.want)
			}
		})
	}
	t.Run("missing key pair", func(t *testing.T) {
		dir := t.TempDir()
		writePolicy(t, dir, "3", time.Now())
		err := run(t.Context(), []string{"-dir", dir, "-addr", "127.0.0.1:0", "-tls-cert", filepath.Join(dir, "nope.crt"), "-tls-key", filepath.Join(dir, "nope.key")}, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
			t.Errorf("run() error = %v, want a missing-file error", err)
		}
	})
}
