// Command webhook is a validating admission webhook that enforces
// ValidatingAdmissionPolicies with vapkit, for clusters that cannot run
// them natively or to shadow-test them (-dry-run) before enabling them.
//
// Cluster mode (the default) watches the cluster's policies and bindings,
// namespaces and params through informers and serves with
// controller-runtime's webhook server (certificate rotation from
// -cert-dir, metrics on -metrics-addr, /readyz once the policies compiled):
//
//	webhook [-cert-dir DIR] [-port 9443] [-metrics-addr :8080] [-health-addr :8081]
//
// Directory mode serves the manifests of a directory, for clusters without
// RBAC to watch policies: policies, bindings, params, Namespaces and CRDs,
// reloaded by polling (a file set is loaded once two consecutive scans saw
// it unchanged; a reload that loses a policy or binding whose file still
// exists is refused). The certificate files are re-read when they change.
//
//	webhook -dir DIR -tls-cert C -tls-key K [-addr :8443] [-metrics-addr :8080] [-poll 2s] [-assume-namespaces]
//
// In both modes: POST /validate takes an admission.k8s.io/v1
// AdmissionReview; every request has a deadline (-timeout, default 8s,
// below the API server's 10 s webhook timeout) and waits for one of
// -max-inflight slots; a request that cannot be decided in time is
// answered per -failure-policy (set it to the webhook configuration's).
// Bodies over -max-review-bytes get 413, reviews without request.uid or
// with trailing data 400. Each request is logged as one JSON line (log/slog)
// and counted in the vapkit_webhook_* Prometheus metrics.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/vapkit/vapkit/examples/controller"
	"github.com/vapkit/vapkit/policy"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
}

// config is what the command line says.
type config struct {
	dir, addr, certFile, keyFile string
	certDir, metricsAddr, probe  string
	port                         int
	poll                         time.Duration
	assumeNamespaces             bool
	handler                      controller.HandlerOptions
	failurePolicy                string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dir, "dir", "", "directory mode: serve the manifests of this directory instead of the cluster's")
	fs.StringVar(&c.addr, "addr", ":8443", "directory mode: address to listen on")
	fs.StringVar(&c.certFile, "tls-cert", "", "directory mode: PEM serving certificate (re-read when it changes)")
	fs.StringVar(&c.keyFile, "tls-key", "", "directory mode: PEM private key of -tls-cert")
	fs.DurationVar(&c.poll, "poll", 2*time.Second, "directory mode: how often to scan -dir; 0 disables reloading")
	fs.BoolVar(&c.assumeNamespaces, "assume-namespaces", false, "directory mode: Namespaces not in -dir exist with only the kubernetes.io/metadata.name label (default: they do not, and requests in them are denied 404 as the API server would)")
	fs.StringVar(&c.certDir, "cert-dir", "", "cluster mode: directory with tls.crt and tls.key (default: controller-runtime's)")
	fs.IntVar(&c.port, "port", 9443, "cluster mode: webhook port")
	fs.StringVar(&c.probe, "health-addr", ":8081", "cluster mode: /healthz and /readyz address")
	fs.StringVar(&c.metricsAddr, "metrics-addr", ":8080", "address of /metrics; 0 disables it")
	fs.DurationVar(&c.handler.Timeout, "timeout", controller.DefaultTimeout, "deadline of each request; keep it below the webhook configuration's timeoutSeconds")
	fs.IntVar(&c.handler.MaxInFlight, "max-inflight", controller.DefaultMaxInFlight, "requests evaluated at once; others wait until their deadline")
	fs.StringVar(&c.failurePolicy, "failure-policy", "Fail", "answer to requests not decided in time: Fail denies, Ignore allows")
	fs.Int64Var(&c.handler.MaxReviewBytes, "max-review-bytes", policy.DefaultMaxReviewBytes, "largest AdmissionReview accepted (413 above)")
	fs.BoolVar(&c.handler.DryRun, "dry-run", false, "never deny: report denials as warnings (shadow mode)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	switch fp := admissionregistrationv1.FailurePolicyType(c.failurePolicy); fp {
	case admissionregistrationv1.Fail, admissionregistrationv1.Ignore:
		c.handler.FailurePolicy = fp
	default:
		return c, fmt.Errorf("-failure-policy must be Fail or Ignore, got %q", c.failurePolicy)
	}
	if c.handler.Timeout <= 0 || c.handler.MaxInFlight <= 0 || c.poll < 0 {
		return c, errors.New("-timeout and -max-inflight must be positive, -poll not negative")
	}
	if c.dir != "" && (c.certFile == "" || c.keyFile == "") {
		return c, errors.New("directory mode needs -tls-cert and -tls-key")
	}
	return c, nil
}

// run parses args and serves until ctx is done. ready, if set, receives
// the directory-mode server's addresses once it listens (for tests).
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- [2]string) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	c.handler.Logger = logger
	c.handler.Metrics = controller.NewMetrics()
	if c.dir != "" {
		return serveDir(ctx, c, ready)
	}
	return serveCluster(ctx, c)
}

// serveDir serves a directory over TLS, reloading it by polling.
func serveDir(ctx context.Context, c config, ready chan<- [2]string) error {
	reg := prometheus.NewRegistry()
	if err := c.handler.Metrics.Register(reg); err != nil {
		return err
	}
	src, err := controller.NewDirSource(c.dir, controller.DirOptions{
		AssumeNamespaces: c.assumeNamespaces, DryRun: c.handler.DryRun, Logger: c.handler.Logger, Metrics: c.handler.Metrics,
	})
	if err != nil {
		return err
	}
	certs, err := certwatcher.New(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("loading TLS key pair: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/validate", controller.NewHandler(src, c.handler))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := src.Health()
		if h.Err != nil {
			http.Error(w, fmt.Sprintf("reload failed: %v\nstill serving generation %d", h.Err, h.Generation), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "ok generation %d: %d files, %d policies, %d bindings\n", h.Generation, h.Files, h.Policies, h.Bindings)
		for _, iss := range h.Issues {
			fmt.Fprintf(w, "issue: %s\n", iss)
		}
	})
	srv := &http.Server{
		Handler: mux,
		// HTTP/2 stays off, as in controller-runtime's webhook server
		// (rapid-reset advisories); the API server speaks HTTP/1.1 too.
		TLSConfig:         &tls.Config{GetCertificate: certs.GetCertificate, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          slog.NewLogLogger(c.handler.Logger.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	var metricsLn net.Listener
	if c.metricsAddr != "0" {
		if metricsLn, err = net.Listen("tcp", c.metricsAddr); err != nil {
			ln.Close()
			return err
		}
		ms := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = ms.Serve(metricsLn) }()
		defer ms.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = certs.Start(ctx) }()
	if c.poll > 0 {
		go src.Run(ctx, c.poll)
	}
	if ready != nil {
		addrs := [2]string{ln.Addr().String()}
		if metricsLn != nil {
			addrs[1] = metricsLn.Addr().String()
		}
		ready <- addrs
	}
	c.handler.Logger.Info("serving", "dir", c.dir, "addr", ln.Addr().String(), "dry-run", c.handler.DryRun)
	shutdown := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		shutdown <- srv.Shutdown(sctx)
	}()
	err = srv.ServeTLS(ln, "", "")
	cancel()
	if errors.Is(err, http.ErrServerClosed) {
		return <-shutdown
	}
	return err
}

// serveCluster serves the cluster's policies with controller-runtime.
func serveCluster(ctx context.Context, c config) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	if err := c.handler.Metrics.Register(ctrlmetrics.Registry); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: c.metricsAddr},
		HealthProbeBindAddress: c.probe,
		WebhookServer:          webhook.NewServer(webhook.Options{Port: c.port, CertDir: c.certDir}),
		// Params are read as unstructured objects from the cache.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	namespaces := factory.Core().V1().Namespaces()
	namespaces.Informer() // register before the factory starts
	sync, err := controller.NewPolicySync(factory, controller.SyncOptions{
		Options: policy.Options{
			Namespaces: &controller.ListerNamespaces{Lister: namespaces.Lister(), Client: cs},
			Params:     &controller.ClientParams{Reader: mgr.GetClient()},
		},
		DryRun: c.handler.DryRun, Logger: c.handler.Logger, Metrics: c.handler.Metrics,
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		factory.Start(ctx.Done())
		factory.WaitForCacheSync(ctx.Done())
		defer factory.Shutdown()
		if err := sync.Sync(); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}
	mgr.GetWebhookServer().Register("/validate", &webhook.Admission{Handler: controller.NewHandler(sync, c.handler)})
	if err := mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil }); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("policies", func(*http.Request) error {
		if ev, _ := sync.Current(); ev == nil {
			return errors.New("policies not compiled yet")
		}
		return nil
	}); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
