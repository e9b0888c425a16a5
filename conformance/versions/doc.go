// Package versions compares vapkit, evaluating as an older API server, with
// that server's own ValidatingAdmissionPolicy plugin.
//
// An old k8s.io/apiserver cannot build in one module with vapkit (v0.30
// needs cel-go v0.17, vapkit v0.29), so each old version has a nested
// module of its own (conformance/v1_30 for 1.30) whose program runs that
// version's real plugin on a directory of cases and prints every response
// it can give as JSON. [Run] writes the cases (policy/testdata/cases and
// generated ones from package gen) to a temporary directory, runs that
// program with `go run` and returns its outcomes; the tests evaluate the
// same cases with vapkit at that version and report every case whose
// answer is none of upstream's. Nothing is recorded in the repository.
//
//	go test ./versions                      # 1.30: testdata and 2,000 seeds
//	go test ./versions -versions.count=200  # fewer generated cases
//
// 1.37 is compared by package diff, in-process.
package versions
