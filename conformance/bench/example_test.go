package bench_test

import (
	"fmt"

	"github.com/vapkit/vapkit/conformance/bench"
)

func ExampleWorkloads() {
	for _, w := range bench.Workloads() {
		fmt.Printf("%s: %d policies, allowed=%v\n", w.Name, w.Policies, w.Allowed)
	}
	// Output:
	// one-policy: 1 policies, allowed=true
	// 10-policies: 10 policies, allowed=false
	// 100-policies: 100 policies, allowed=false
	// 10000-policies: 10000 policies, allowed=true
	// selector-params-20: 1 policies, allowed=true
	// update-large: 11 policies, allowed=true
	// cluster-10: 10 policies, allowed=true
	// cluster-100: 100 policies, allowed=true
	// cluster-1000: 1000 policies, allowed=true
	// cluster-10000: 10000 policies, allowed=true
	// update-1-containers: 11 policies, allowed=true
	// update-1000-containers: 11 policies, allowed=true
}
