// Command vapkit tests, evaluates and checks Kubernetes
// ValidatingAdmissionPolicies without a cluster, deciding as the Kubernetes
// 1.37 API server (or an older one, with -kubernetes-version) decides.
//
//	go install github.com/vapkit/vapkit/examples/vapkit@latest
//
// Subcommands:
//
//	vapkit test [flags] PATH...      run suites and case files against their expectations
//	vapkit eval CASE.yaml            print the AdmissionReview response for one case file
//	vapkit typecheck FILE...         validation errors and status.typeChecking of each policy
//	                                 (for MutatingAdmissionPolicies, vapkit's own type checking)
//	vapkit audit -policies DIR -objects DIR [-details]
//	                                 what would break: a cluster dump against policies
//	vapkit init POLICY.yaml          a suite skeleton with one allow and one deny test per policy
//
// vapkit test reports like go test (-v lists every test with its
// decision), or as JSON or JUnit XML (-format json|junit), runs the tests
// whose name matches -run, and prints, for suites, which expressions the
// tests evaluated to true, false or an error. A test whose objects the API
// server would refuse to create is an error, never a pass. Suites, case
// files and expectations are described in examples/review/FORMAT.md.
//
// Exit status: 0 when everything passed, 1 when a test failed or errored
// (or typecheck found a policy the server would reject), 2 for bad usage
// or input.
//
// examples/review, examples/typecheck and examples/audit are the same
// commands under their former names.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/vapkit/vapkit/examples/internal/auditcmd"
	"github.com/vapkit/vapkit/examples/internal/reviewcmd"
	"github.com/vapkit/vapkit/examples/internal/typecheckcmd"
)

const usage = `usage: vapkit COMMAND [flags] [args]

commands:
  test       run suites and case files against their expectations
  eval       print the AdmissionReview response for one case file
  typecheck  validation errors and status.typeChecking of each policy in FILE...
  audit      evaluate a cluster dump against policies: what would break
  init       write a suite skeleton for a policy file

"vapkit COMMAND -h" describes a command.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to the subcommand and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return reviewcmd.ExitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "test":
		return reviewcmd.Test(ctx, rest, stdout, stderr)
	case "eval":
		return reviewcmd.Eval(ctx, rest, stdout, stderr)
	case "typecheck":
		return typecheckcmd.Main(rest, stdout, stderr)
	case "audit":
		if code := auditcmd.Main(ctx, rest, stdout, stderr); code != 0 {
			return reviewcmd.ExitUsage
		}
		return reviewcmd.ExitOK
	case "init":
		return reviewcmd.Init(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return reviewcmd.ExitOK
	}
	fmt.Fprintf(stderr, "vapkit: unknown command %q\n%s", cmd, usage)
	return reviewcmd.ExitUsage
}
