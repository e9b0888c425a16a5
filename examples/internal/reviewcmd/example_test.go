package reviewcmd

import (
	"context"
	"fmt"
	"os"
)

// The runner over the example cases: one expectation in a sibling
// .expect.yaml file, one inline, one skipped.
func Example() {
	err := run(context.Background(), []string{"testdata/cases"}, os.Stdout)
	fmt.Println("exit status", exitCode(err))
	// Output:
	// --- PASS: replicas-allowed
	// --- PASS: replicas-denied
	// --- SKIP: skipped
	//     waiting for the replica limit to move into params
	// PASS
	// ok  	testdata/cases	2 passed, 1 skipped (Kubernetes 1.37)
	// exit status 0
}

// A failing run reports each unmet expectation as a diff and exits with
// status 1.
func Example_failing() {
	err := run(context.Background(), []string{"testdata/failing"}, os.Stdout)
	fmt.Println("exit status", exitCode(err))
	// Output:
	// --- FAIL: replicas
	//     testdata/failing/replicas.yaml:51: deny.message (-want +got):
	//         - text matching /at most [0-3] replicas$/
	//         + "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'replicas' with binding 'replicas-binding' denied request: at most 5 replicas"
	// FAIL
	// FAIL	testdata/failing	0 passed, 1 failed (Kubernetes 1.37)
	// exit status 1
}
