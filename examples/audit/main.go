// Command audit answers "what would break if I enabled these policies?": it
// evaluates the objects of a cluster dump against the
// ValidatingAdmissionPolicies of a directory and prints, per policy and
// binding, how many objects each would deny, warn about or audit.
//
//	go run ./examples/audit -policies examples/audit/testdata/policies -objects examples/audit/testdata/cluster [-details]
//
// -policies is a directory of policies, bindings, parameter objects, the
// Namespaces and CRDs they need (*.yaml, *.yml and *.json files directly in
// it). -objects is a directory, searched recursively, of manifests as
// `kubectl get -o yaml` writes them: single objects, multi-document YAML or
// v1 Lists. With -details the objects behind every count are listed with
// the message they got.
//
// # How objects are evaluated
//
// Every object of the dump is evaluated as if it were being created: a
// CREATE request with the object as written (status and metadata included),
// no oldObject, no user and empty CreateOptions. Creation is the moment a
// policy first sees an object, and the question asked is whether the object
// could exist under the policy, so rules that match only UPDATE or DELETE,
// and validations that look at oldObject, are not exercised. Namespaced
// objects without a namespace are put in "default". The dump's
// ValidatingAdmissionPolicies, bindings and AdmissionReviews are not
// evaluated; objects of kinds that are neither built in nor defined by a
// CRD in either directory are skipped and listed.
//
// Each binding is evaluated on its own, so the counts of one binding do not
// depend on another. Parameter objects are looked up in both directories
// (the policy directory wins on a clash); namespaceSelector and
// namespaceObject see the dump's Namespaces, and a namespace missing from
// it as one with only the kubernetes.io/metadata.name label.
//
// # Output
//
// One row per binding, in policy then binding order: the objects it
// matched (EVALUATED), and of those how many were denied, got a warning, got
// a validation failure audit annotation, or hit an evaluation error
// (including errors ignored under failurePolicy Ignore). An object can
// count in several columns. A policy without bindings is listed with
// binding "-" and is not evaluated.
//
// It is the audit subcommand of examples/vapkit.
package main

import (
	"context"
	"os"

	"github.com/vapkit/vapkit/examples/internal/auditcmd"
)

func main() {
	os.Exit(auditcmd.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
