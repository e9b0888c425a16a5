#!/bin/sh
# compare.sh RAW — split the output of run.sh (or of
#   go test -run '^$' -bench . -count 6 ./bench)
# into one file per side and print:
#   - the benchstat comparisons upstream vs vapkit and floor vs vapkit
#     (rows Eval/<workload> and Compile/1000-policies; wall time, cpu-ns/op,
#     B/op, allocs/op);
#   - per-process ratios of cpu-ns/op: the k-th upstream (or floor) result
#     of a workload divided by the k-th vapkit result, min, median and max
#     over the processes (run.sh runs the sides of one round next to each
#     other, so the k-th results share the machine's speed of that moment);
#   - the fixed cost of BenchmarkFixedCost (medians over the rounds);
#   - a markdown table (median cpu-ns/op per side, median per-process
#     ratios, allocations) to paste into RESULTS.md and the README.
# Needs benchstat:
#   go install golang.org/x/perf/cmd/benchstat@latest
# (or set BENCHSTAT to its path).
set -eu
raw=${1:?usage: compare.sh RAW}
dir=$(mktemp -d)
trap 'rm -r "$dir"' EXIT
side() { # side NAME SIDE: keep the lines of one side, without it in the name
	{
		grep -E '^(goos|goarch|pkg|cpu):' "$raw" | sort -u || true
		sed -n -e "s#^Benchmark$2/#BenchmarkEval/#p" \
			-e "s#^BenchmarkCompile/$1/#BenchmarkCompile/#p" "$raw"
	} >"$dir/$1"
}
side upstream Upstream
side vapkit Vapkit
side floor Floor
bench=${BENCHSTAT:-benchstat}
grep '^#' "$raw" || true
echo
echo "## upstream vs vapkit"
(cd "$dir" && "$bench" upstream vapkit)
echo
echo "## floor vs vapkit"
(cd "$dir" && "$bench" -filter '.name:Eval' floor vapkit)
echo
echo "## fixed cost (BenchmarkFixedCost: medians over the rounds of vapkit-ns/op, cel-ns/op, fixed-ns/op)"
awk '
function metric(unit,    i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "" }
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
/^BenchmarkFixedCost\// {
	w = $1; sub(/^BenchmarkFixedCost\//, "", w); sub(/-[0-9]+$/, "", w)
	if (!(w in n)) order[++nw] = w
	k = ++n[w]; v[w, k] = metric("vapkit-ns/op"); c[w, k] = metric("cel-ns/op"); f[w, k] = metric("fixed-ns/op")
}
END {
	for (i = 1; i <= nw; i++) {
		w = order[i]
		for (k = 1; k <= n[w]; k++) { a[k] = v[w, k]; b[k] = c[w, k]; d[k] = f[w, k] }
		printf "%-20s vapkit %.0f ns  bare CEL %.0f ns  fixed %.0f ns  (%d rounds)\n", w, median(a, n[w]), median(b, n[w]), median(d, n[w]), n[w]
	}
}' "$raw"
echo
echo "## per-process ratios of cpu-ns/op (min median max, over processes), then a table to paste"
awk '
function metric(unit,    i) { for (i = 3; i < NF; i++) if ($(i+1) == unit) return $i; return "" }
/^Benchmark(Upstream|Vapkit|Floor)\// {
	split($1, p, "/"); s = p[1]; sub(/^Benchmark/, "", s)
	w = substr($1, length(p[1]) + 2); sub(/-[0-9]+$/, "", w)
	v = metric("cpu-ns/op"); if (v == "") next
	k = ++count[s, w]; val[s, w, k] = v; allocs[s, w] = metric("allocs/op")
	if (!(w in seen)) { seen[w] = 1; order[++nw] = w }
}
function sort(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
}
function median(a, n) { sort(a, n); return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
function stats(a, n,    m) { m = median(a, n); return sprintf("%.2fx %.2fx %.2fx", a[1], m, a[n]) }
function dur(ns) {
	if (ns == "") return "—"
	if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%d ns", ns)
}
function sidemedian(s, w,    k, n) { n = 0; delete m; for (k = 1; k <= count[s, w]; k++) m[++n] = val[s, w, k]; return n ? median(m, n) : "" }
function ratio(s, w,    k, n) {
	n = 0; delete r
	for (k = 1; k <= count[s, w] && k <= count["Vapkit", w]; k++) r[++n] = val[s, w, k] / val["Vapkit", w, k]
	return n
}
END {
	printf "%-28s %-28s %-28s\n", "workload", "upstream/vapkit", "floor/vapkit"
	for (i = 1; i <= nw; i++) {
		w = order[i]; out = ""
		for (si = 1; si <= 2; si++) {
			n = ratio(si == 1 ? "Upstream" : "Floor", w)
			out = out sprintf(" %-28s", n ? stats(r, n) : "-")
		}
		printf "%-28s%s\n", w, out
	}
	print ""
	print "| workload | upstream | vapkit | floor | upstream ÷ vapkit | floor ÷ vapkit | allocs upstream → vapkit |"
	print "|---|---|---|---|---|---|---|"
	for (i = 1; i <= nw; i++) {
		w = order[i]
		n = ratio("Upstream", w); up = n ? sprintf("%.1f×", median(r, n)) : "—"
		n = ratio("Floor", w); fl = n ? sprintf("%.2f×", median(r, n)) : "—"
		printf "| %s | %s | %s | %s | %s | %s | %s → %s |\n", w, dur(sidemedian("Upstream", w)), dur(sidemedian("Vapkit", w)), dur(sidemedian("Floor", w)), up, fl, allocs["Upstream", w], allocs["Vapkit", w]
	}
}' "$raw"
