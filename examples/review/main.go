// Command review evaluates ValidatingAdmissionPolicies outside a cluster,
// for one request or for suites and directories of test cases. It is
// vapkit eval and vapkit test of examples/vapkit under its former name.
//
// A case file holds, in multi-document YAML, a cluster's policies,
// bindings, params and namespaces plus one AdmissionReview request (the
// shared case format; see FORMAT.md next to this file). A suite
// (vapkit.dev/v1alpha1 Suite) names the cluster's files once and lists
// many tests of a few lines; suites/replica-limit.yaml is an example, and
// suite files given by name or found in a directory are run as tests,
// followed by a coverage table of their policies.
//
// # Printing one response
//
//	go run ./examples/review CASE.yaml
//
// prints the AdmissionReview response the API server would return, as JSON.
// Bad input exits with status 1 and a one-line error naming the file, the
// line and the document.
//
// # Testing cases
//
//	go run ./examples/review [-format text|json|junit] [-kubernetes-version 1.NN] [-run REGEXP] DIR...
//
// runs every case file (*.yaml and *.yml, searched recursively, except
// *.expect.yaml) under each DIR and checks its response against the case's
// expectation, which is exactly one of:
//
//   - an inline document of apiVersion vapkit.dev/v1alpha1, kind
//     Expectation, in the case file;
//   - the same document alone in a sibling NAME.expect.yaml;
//   - a sibling NAME.expected.json holding the expected AdmissionReview (the
//     shared conformance format, with its oracle alternatives).
//
// An Expectation says allow or deny (with the message matched exactly, by
// substring or by regular expression, and optionally the status code and
// reason), the warnings in order, audit annotations by key, or skip with a
// reason:
//
//	apiVersion: vapkit.dev/v1alpha1
//	kind: Expectation
//	deny:
//	  message: {contains: "at most 5 replicas"}
//	  code: 422
//	  reason: Invalid
//	warnings:
//	- {regexp: "^Validation failed for ValidatingAdmissionPolicy 'replicas'"}
//	auditAnnotations:
//	  replicas/count: "7"
//
// FORMAT.md describes every field. Case files given by name are tested too
// when -test (or -format, or -run) is set, or when several paths are given.
//
// The report is go test-like text by default ("--- PASS: name", "--- FAIL:
// name" followed by each failed check as a -want +got diff, then PASS or
// FAIL and an "ok"/"FAIL" summary line per directory); -format json writes
// one JSON document; -format junit writes JUnit XML for CI systems. Cases run
// concurrently; results are always reported in file-name order.
//
// -kubernetes-version chooses the API server's binary version (1.30 to 1.37,
// default 1.37) whose CEL libraries and behaviour the policies are evaluated
// with; as that server does, it accepts in policies being created only the
// libraries of its compatibility version, one minor lower (see
// celenv.Version).
//
// # What the API server would refuse
//
// In test mode a case whose objects the API server would refuse is an error
// ("--- ERROR: name"), never a pass, and distinct from a failed expectation:
// a policy or binding failing the server's create validation (CEL is
// compiled as a server of the chosen version compiles new expressions), a
// binding whose policy the case lacks, an admissionregistration.k8s.io kind
// no server serves, an object of a built-in kind that strict field
// validation rejects (an unknown field, a wrong type), a custom resource
// its CRD's schema refuses, and a created built-in object whose metadata
// kube-apiserver refuses (typecheck.ValidateBuiltinMetadata: a bad name,
// label, annotation, finalizer or namespace). Each refusal names
// the file, the line and the field path. -stored evaluates such cases
// anyway, as if their objects were already stored, and lists the refusals
// in the JSON report; printing one case always answers for stored objects
// and lists the refusals on stderr.
//
// # Exit status
//
// 0 when every case passes (skipped cases do not fail a run), 1 when a case
// fails or cannot be run (its input is broken: the error names the file and
// line) or the response cannot be printed, 2 for command-line mistakes.
package main

import (
	"context"
	"os"

	"github.com/vapkit/vapkit/examples/internal/reviewcmd"
)

func main() {
	os.Exit(reviewcmd.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
