// Command materialize writes the conformance harness module of one older
// Kubernetes version into a directory, to run that version's
// ValidatingAdmissionPolicy plugin on case files by hand:
//
//	go run ./versions/cmd/materialize -version 1.33 DIR
//	cd DIR && GOWORK=off go run -tags vapkit_harness,vapkit_k8s_1_33 . CASEDIR...
//
// The tests of package versions do the same in a temporary directory.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/vapkit/vapkit/celenv"
	"github.com/vapkit/vapkit/conformance/versions"
)

func main() {
	version := flag.String("version", "1.30", "Kubernetes version (1.30-1.36)")
	flag.Parse()
	if err := run(*version, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "materialize:", err)
		os.Exit(1)
	}
}

func run(version string, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: materialize -version 1.NN DIR")
	}
	v, err := celenv.ParseVersion(version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(args[0], 0o755); err != nil {
		return err
	}
	if err := versions.Materialize(args[0], v); err != nil {
		return err
	}
	fmt.Printf("cd %s && GOWORK=off go run -tags %s . CASEDIR...\n", args[0], versions.Tags(v))
	return nil
}
