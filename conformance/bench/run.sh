#!/bin/sh
# run.sh [N] — run every benchmark of this package N times (default 6),
# each time in a fresh process, and print the raw output for compare.sh:
#   sh bench/run.sh > bench.txt && sh bench/compare.sh bench.txt
# With `go test -count N` each side measures its N counts in its own few
# minutes; on a machine whose speed drifts, that biases the ratios either
# way. Alternating the sides run by run spreads the drift over all of them.
set -eu
n=${1:-6}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -r "$dir"' EXIT
(cd "$here" && go test -c -o "$dir/bench.test" .)
i=0
while [ "$i" -lt "$n" ]; do
	(cd "$here" && "$dir/bench.test" -test.run '^$' -test.bench . -test.count 1 -test.timeout 90m)
	i=$((i + 1))
done
