#!/bin/sh
# compare.sh RAW — split the output of
#   go test -run '^$' -bench . -count 6 ./bench
# into one file per side and print the benchstat comparisons
# (upstream vs vapkit, floor vs vapkit, all-tracked floor vs vapkit). Rows
# are named Eval/<workload> and Compile/1000-policies. Needs benchstat:
#   go install golang.org/x/perf/cmd/benchstat@latest
# (or set BENCHSTAT to its path).
set -eu
raw=${1:?usage: compare.sh RAW}
dir=$(mktemp -d)
trap 'rm -r "$dir"' EXIT
side() { # side NAME SIDE: keep the lines of one side, without it in the name
	{
		grep -E '^(goos|goarch|pkg|cpu):' "$raw" || true
		sed -n -e "s#^Benchmark$2/#BenchmarkEval/#p" \
			-e "s#^BenchmarkCompile/$1/#BenchmarkCompile/#p" "$raw"
	} >"$dir/$1"
}
side upstream Upstream
side vapkit Vapkit
side floor Floor
side floor-tracked FloorTracked
bench=${BENCHSTAT:-benchstat}
echo "## upstream vs vapkit"
(cd "$dir" && "$bench" upstream vapkit)
echo
echo "## floor vs vapkit"
(cd "$dir" && "$bench" -filter '.name:Eval' floor vapkit)
echo
echo "## all-tracked floor vs vapkit"
(cd "$dir" && "$bench" -filter '.name:Eval' floor-tracked vapkit)
