// Command shadow reports which objects a cluster holds today that
// candidate ValidatingAdmissionPolicies would deny or warn on: the
// live-cluster "what would break" before a policy is enabled.
//
//	shadow -f candidate.yaml [-f more.yaml] [-operation CREATE|UPDATE] [-interval 0]
//
// It reads the candidate policies and bindings (and any params) from the
// files, lists the objects of every kind their rules name from the cluster
// of the current kubeconfig context, evaluates each as if it were created
// anew (or updated to itself) with the cluster's namespaces and params, and
// prints one line per finding:
//
//	DENY apps/v1, Kind=Deployment team-a/web: deployments.apps "web" is forbidden: ...
//	WARN /v1, Kind=ConfigMap team-b/settings: Validation failed for ...
//
// With -interval it runs as a controller, reporting again at every
// interval until interrupted. It exits 3 when a run found denials.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vapkit/vapkit/examples/controller"
	"github.com/vapkit/vapkit/params"
	"github.com/vapkit/vapkit/policy"
	"github.com/vapkit/vapkit/policy/manifest"
)

// errDenials makes the command exit 3.
var errDenials = errors.New("candidate policies would deny existing objects")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	switch {
	case errors.Is(err, errDenials):
		os.Exit(3)
	case err != nil:
		fmt.Fprintln(os.Stderr, "shadow:", err)
		os.Exit(1)
	}
}

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// run parses args and reports; reader, when nil, is a client for the
// current kubeconfig context.
func run(ctx context.Context, args []string, out, stderr io.Writer, reader client.Reader) error {
	var fs files
	var op string
	var interval time.Duration
	flags := flag.NewFlagSet("shadow", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Var(&fs, "f", "file of candidate policies and bindings (repeatable)")
	flags.StringVar(&op, "operation", "CREATE", "evaluate objects as CREATE or as an UPDATE to themselves")
	flags.DurationVar(&interval, "interval", 0, "report again at this interval; 0 reports once")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if len(fs) == 0 {
		return errors.New("no -f files given")
	}
	if op != string(admissionv1.Create) && op != string(admissionv1.Update) {
		return fmt.Errorf("-operation must be CREATE or UPDATE, got %q", op)
	}
	set, err := manifest.LoadFiles(fs...)
	if err != nil {
		return err
	}
	if reader == nil {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return err
		}
		if reader, err = client.New(cfg, client.Options{}); err != nil {
			return err
		}
	}
	// Params from the files come first; the cluster's are read live.
	static, err := params.NewStatic(set.Objects...)
	if err != nil {
		return err
	}
	live := &controller.ClientParams{Reader: reader}
	src := params.SourceFunc(func(ctx context.Context, q params.Query) ([]runtime.Object, error) {
		if objs, err := static.Find(ctx, q); err != nil || len(objs) > 0 {
			return objs, err
		}
		return live.Find(ctx, q)
	})
	ev, err := policy.Compile(set.Policies, set.Bindings, policy.Options{
		Namespaces: &controller.ClientNamespaces{Reader: reader}, Params: src, CRDs: set.CRDs,
	})
	if err != nil {
		return err
	}
	for _, iss := range ev.Issues() {
		fmt.Fprintf(stderr, "issue: %v\n", iss)
	}
	mapper, err := manifest.NewResourceMapper(set.CRDs...)
	if err != nil {
		return err
	}
	kinds, skipped := controller.KindsOf(mapper, set.Policies)
	for _, s := range skipped {
		fmt.Fprintf(stderr, "not listed (wildcard or unknown): %s\n", s)
	}
	sh := &controller.Shadow{Reader: reader, Evaluator: ev, Kinds: kinds, Operation: admissionv1.Operation(op)}
	for {
		err := report(ctx, sh, out)
		if interval <= 0 || (err != nil && !errors.Is(err, errDenials)) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// report runs sh once and prints its findings.
func report(ctx context.Context, sh *controller.Shadow, out io.Writer) error {
	findings, err := sh.Run(ctx)
	if err != nil {
		return err
	}
	denials := 0
	for _, f := range findings {
		if f.Denied {
			denials++
			fmt.Fprintf(out, "DENY %v %s/%s: %s\n", f.Kind, f.Namespace, f.Name, f.Message)
		}
		for _, w := range f.Warnings {
			fmt.Fprintf(out, "WARN %v %s/%s: %s\n", f.Kind, f.Namespace, f.Name, w)
		}
	}
	fmt.Fprintf(out, "%d objects would be denied, %d warned\n", denials, len(findings)-denials)
	if denials > 0 {
		return errDenials
	}
	return nil
}
