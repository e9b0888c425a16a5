#!/bin/sh
# run.sh [N] — run every benchmark of this package N times (default 6) and
# print the raw output for compare.sh:
#   sh bench/run.sh > bench.txt && sh bench/compare.sh bench.txt
# Each side (Upstream, Vapkit, Floor) runs in its own fresh process, and
# the order of the sides alternates run by run: on a machine whose speed
# drifts, measuring one side's N counts in its own few minutes biases the
# ratios either way; alternating spreads the drift over all sides.
# BENCHTIME sets -test.benchtime (default 1s) and BENCH restricts the
# workloads (a regexp on the sub-benchmark name, e.g.
# BENCH='cluster-100$'); COMPILE=0 skips the compile benchmarks and
# FIXED=0 the fixed-cost one (BenchmarkFixedCost, once per round).
# The output starts with each workload's shape (lines beginning with #).
set -eu
n=${1:-6}
bench=${BENCH:-.}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -r "$dir"' EXIT
(cd "$here" && go test -c -o "$dir/bench.test" .)
(cd "$here" && BENCH_SHAPES=1 "$dir/bench.test")
i=0
while [ "$i" -lt "$n" ]; do
	if [ $((i % 2)) -eq 0 ]; then sides="Upstream Vapkit Floor"; else sides="Floor Vapkit Upstream"; fi
	for side in $sides; do
		(cd "$here" && "$dir/bench.test" -test.run '^$' -test.bench "^Benchmark$side\$/$bench" -test.benchtime "${BENCHTIME:-1s}" -test.count 1 -test.timeout 90m)
	done
	if [ "${FIXED:-1}" != 0 ]; then
		(cd "$here" && "$dir/bench.test" -test.run '^$' -test.bench '^BenchmarkFixedCost$' -test.benchtime "${BENCHTIME:-1s}" -test.count 1 -test.timeout 90m)
	fi
	if [ "${COMPILE:-1}" != 0 ]; then
		(cd "$here" && "$dir/bench.test" -test.run '^$' -test.bench '^BenchmarkCompile$' -test.count 1 -test.timeout 90m)
	fi
	i=$((i + 1))
done
