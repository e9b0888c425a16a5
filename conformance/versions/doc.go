// Package versions compares vapkit, evaluating as an older API server, with
// that server's own ValidatingAdmissionPolicy plugin.
//
// An old k8s.io/apiserver cannot build in one module with vapkit (v0.30
// needs cel-go v0.17, vapkit v0.29), so each version runs from a module of
// its own. There is one harness for all of them: a program in ./harness
// (behind the vapkit_harness build tag, so that this module never builds
// it) that runs the plugin on a directory of cases and prints every
// response it can give as JSON, built on this module's package upstream,
// the one that runs 1.37 (its source is shared by every version; the few
// places where the plugin's API changed between versions are files
// selected by the vapkit_harness and vapkit_k8s_1_NN tags), and the go.mod
// and go.sum of each version in ./harness/mod. [Materialize] writes
// one version's module to a directory; [Run] does so in a temporary
// directory, writes the cases (policy/testdata/cases, ./testdata and
// generated ones from package gen) beside it, runs it with `go run` and
// returns its outcomes. The tests evaluate the same cases with vapkit at
// that version and report every case whose answer is none of upstream's.
// Nothing is recorded in the repository.
//
//	go test ./versions                                   # 1.30, the oldest: testdata and 2,000 seeds
//	go test ./versions -versions.count=200               # fewer generated cases
//	go test ./versions -run OnDemand -versions.all       # 1.31 to 1.36 as well
//	go test ./versions -run OnDemand -versions.only=1.33 # one of them
//
// 1.37 is compared by package diff, in-process. The divergences found per
// version are listed in the conformance module's README.
package versions
