// Command webhook is an HTTPS validating admission webhook that enforces the
// ValidatingAdmissionPolicies of a directory with vapkit, for clusters that
// cannot run the policies natively or to shadow-test them before enabling
// them. It needs nothing but the standard library and vapkit: no client-go.
//
//	go run ./examples/webhook -dir ./policies -tls-cert tls.crt -tls-key tls.key [-addr :8443] [-dry-run]
//
// # Configuration directory
//
// Every *.yaml, *.yml and *.json file directly in -dir (hidden files
// excluded, symbolic links followed, so a mounted ConfigMap works) is read
// with [github.com/vapkit/vapkit/policy/manifest.LoadFiles]:
// ValidatingAdmissionPolicies and their bindings, parameter objects, the
// Namespaces that namespaceSelector and namespaceObject look up, and the
// CustomResourceDefinitions that say which custom kinds exist. Write parameter objects with their namespace; nothing
// is defaulted. The policies are compiled once into a [policy.Evaluator].
//
// The directory is polled every -poll interval (default 2s) for changed,
// added or removed files (by size and modification time; no inotify). A
// change recompiles everything and swaps the new evaluator in atomically:
// requests in flight finish with the evaluator they started with. A reload
// that fails (bad YAML, duplicate names) keeps the previous evaluator
// serving; the failure is printed and /healthz reports it until a later
// reload succeeds. A failure on startup is fatal.
//
// # Endpoints
//
//   - POST /validate takes an admission.k8s.io/v1 AdmissionReview and answers
//     with the AdmissionReview holding the response the API server's own
//     ValidatingAdmissionPolicy plugin would give (allowed, status,
//     warnings, audit annotations). Register it in a
//     ValidatingWebhookConfiguration with admissionReviewVersions [v1].
//   - GET /healthz answers 200 and "ok ..." while the last load succeeded,
//     and 503 with the error while a failed reload leaves the previous
//     policies serving. Compile issues the API server tolerates
//     ([policy.Evaluator.Issues]) are listed but do not fail the check.
//
// # Dry run
//
// With -dry-run the webhook never denies. Every binding's Deny action is
// treated as Warn before compiling, so each failing validation produces the
// API server's "Validation failed for ValidatingAdmissionPolicy ..." warning
// (exactly what switching the binding to validationActions [Warn] would
// show), and any denial left over (a policy or binding that fails to
// configure under failurePolicy Fail, a request that cannot be evaluated)
// is turned into an allowed response with the warning
// "dry-run: would deny: <message>". Audit annotations are returned as
// usual.
//
// # TLS
//
// The certificate and key are PEM files read at startup; the API server must
// trust the certificate (caBundle in the webhook configuration). TLS 1.2 is
// the minimum.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "webhook:", err)
		os.Exit(1)
	}
}

// config is what the command line says.
type config struct {
	dir      string
	addr     string
	certFile string
	keyFile  string
	dryRun   bool
	poll     time.Duration
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dir, "dir", "", "directory of policies, bindings, params, namespaces and CRDs (*.yaml, *.yml, *.json)")
	fs.StringVar(&c.addr, "addr", ":8443", "address to listen on")
	fs.StringVar(&c.certFile, "tls-cert", "", "PEM file with the serving certificate (and its chain)")
	fs.StringVar(&c.keyFile, "tls-key", "", "PEM file with the private key of -tls-cert")
	fs.BoolVar(&c.dryRun, "dry-run", false, "never deny: report denials as warnings (shadow mode)")
	fs.DurationVar(&c.poll, "poll", 2*time.Second, "how often to check -dir for changes; 0 disables reloading")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var missing []string
	for _, f := range []struct{ name, value string }{{"-dir", c.dir}, {"-tls-cert", c.certFile}, {"-tls-key", c.keyFile}} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("missing required flags: %s", strings.Join(missing, ", "))
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if c.poll < 0 {
		return c, fmt.Errorf("-poll must not be negative, got %v", c.poll)
	}
	return c, nil
}

// run parses args, loads the directory, listens and serves until ctx is
// done.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logger := log.New(stderr, "webhook: ", log.LstdFlags)
	s, err := newServer(c.dir, c.dryRun, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	logger.Printf("serving %s on https://%s (dry-run %t)", c.dir, ln.Addr(), c.dryRun)
	return serve(ctx, ln, s, c)
}

// serve serves s over TLS on ln, polling for changes, until ctx is done;
// then it shuts down gracefully. It closes ln.
func serve(ctx context.Context, ln net.Listener, s *server, c config) error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		ln.Close()
		return fmt.Errorf("loading TLS key pair: %w", err)
	}
	srv := &http.Server{
		Handler:           s.handler(),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          s.logger,
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if c.poll > 0 {
			s.watch(ctx, c.poll)
		}
	}()
	shutdown := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		shutdown <- srv.Shutdown(sctx)
	}()
	err = srv.Serve(tls.NewListener(ln, srv.TLSConfig))
	cancel()
	<-watched
	if errors.Is(err, http.ErrServerClosed) {
		return <-shutdown
	}
	return err
}
