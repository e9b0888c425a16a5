#!/bin/sh
# compare.sh RAW — split the output of
#   go test -run '^$' -bench . -count 6 ./bench
# into one file per side and print the benchstat comparisons
# (upstream vs vapkit, vapkit vs floor). Needs benchstat:
#   go install golang.org/x/perf/cmd/benchstat@latest
set -eu
raw=${1:?usage: compare.sh RAW}
dir=$(mktemp -d)
header() { grep -E '^(goos|goarch|pkg|cpu):' "$raw"; }
side() { # side NAME PATTERN...: keep the matching lines, renamed BenchmarkEval/...
	name=$1
	shift
	{
		header
		for p in "$@"; do
			sed -n "s#^$p#BenchmarkEval/#p" "$raw"
		done
	} >"$dir/$name"
}
side upstream 'BenchmarkUpstream/' 'BenchmarkCompile/upstream/'
side vapkit 'BenchmarkVapkit/' 'BenchmarkCompile/vapkit/'
side floor 'BenchmarkFloor/'
bench=${BENCHSTAT:-benchstat}
echo "## upstream vs vapkit"
(cd "$dir" && "$bench" upstream vapkit)
echo
echo "## floor vs vapkit"
(cd "$dir" && "$bench" floor vapkit)
rm -r "$dir"
