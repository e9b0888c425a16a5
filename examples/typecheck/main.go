// Command typecheck reports, for every ValidatingAdmissionPolicy in the
// given manifest files, what the API server would say about it: the errors
// its create-time validation reports (a policy with errors is rejected) and
// the status.typeChecking its policy status controller writes, plus the
// warnings vapkit finds beyond upstream (custom kinds checked against the
// CustomResourceDefinitions found in the same files).
//
//	go run ./examples/typecheck FILE...
//
// The report is YAML, one document per policy. Errors and warnings carry
// the file and line of the field they concern. The exit status is 1 when at
// least one policy would be rejected, 2 when the files cannot be read.
//
// It is the typecheck subcommand of examples/vapkit.
package main

import (
	"os"

	"github.com/vapkit/vapkit/examples/internal/typecheckcmd"
)

func main() {
	os.Exit(typecheckcmd.Main(os.Args[1:], os.Stdout, os.Stderr))
}
