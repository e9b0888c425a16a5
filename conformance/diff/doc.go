// Package diff runs vapkit and the real upstream ValidatingAdmissionPolicy
// plugin side by side on the same cases and reports every difference.
//
// Its tests cover every case in the project's testdata (policy/testdata/cases)
// and a range of generated cases (package gen). vapkit's answer is accepted
// when it equals one of the outcomes upstream can produce over the orderings
// it leaves to chance (policies, bindings, selector-listed params).
//
//	go test ./diff                                  # testdata + seeds 0..1999
//	go test ./diff -short                           # testdata + seeds 0..199
//	go test ./diff -run TestGenerated -gen.count=100000 -timeout=0
//	go test ./diff -run TestGenerated -gen.start=5000 -gen.count=10 -v
//
// A failing seed prints its case in the shared case format, ready to be
// added to policy/testdata/cases with its expected file. Differences that
// are upstream's own bugs or nondeterminism are listed, each with its
// reason, in known-divergences.yaml; anything else fails the test.
package diff
