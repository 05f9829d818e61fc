#!/bin/bash
# proxy_bench.sh: what the model proxy of `vram serve` adds to a request,
# side by side in one run: a trivial backend called directly, through vram
# serve's proxy (/m/bench/ok) and through nginx as a plain reverse proxy
# (bench/proxy_setup.sh starts them). wrk measures latency (1 connection:
# p50, p99) and throughput (64 connections). The three paths are measured
# ROUNDS times, interleaved, each round in another order; medians are
# reported, and the ratio vram/nginx of each round. The daemon logs every
# request, as it does in use.
# Usage: bench/proxy_bench.sh [SECONDS [ROUNDS]]   (default 10 s, 3 rounds;
# needs wrk and nginx; build/ built, or B=folder)
set -eu
cd "$(dirname "$0")/.."
D=${1:-10}
R=${2:-3}
. bench/proxy_setup.sh

# wrk --latency's "     50%    1.23ms" -> microseconds
us() { awk -v p="$1" '$1 == p { v = $2; if (v ~ /us$/) { sub(/us/, "", v); print v + 0 }
    else if (v ~ /ms$/) { sub(/ms/, "", v); print v * 1000 } else { sub(/s/, "", v); print v * 1e6 } }'; }
echo "machine: $(nproc) cores, $(uname -r); wrk $D s per run, $R rounds${PIN:+, pinned}; $(date -u +%FT%TZ)"
printf '%-5s %-7s %10s %10s %12s\n' round path p50_us p99_us req_per_s
PATHS=(direct vram nginx)
for r in $(seq 1 "$R"); do
    for i in 0 1 2; do # each round starts with another path: none always runs first
        k=${PATHS[$(((i + r) % 3))]}
        "${RUNWRK[@]}" -t1 -c1 -d"$D"s --latency "${URL[$k]}" >"$T/lat.$k"
        "${RUNWRK[@]}" -t2 -c64 -d"$D"s "${URL[$k]}" >"$T/tput.$k"
        P50=$(us 50% <"$T/lat.$k")
        P99=$(us 99% <"$T/lat.$k")
        RPS=$(awk '/Requests\/sec/ { print $2 }' "$T/tput.$k")
        printf '%-5s %-7s %10s %10s %12s\n' "$r" "$k" "$P50" "$P99" "$RPS"
        echo "$r $k $P50 $P99 $RPS" >>"$T/sum"
    done
done
awk 'function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
        t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { n[$2]++; p50[$2, n[$2]] = $3; p99[$2, n[$2]] = $4; rps[$2, n[$2]] = $5; by[$1, $2] = $5 }
    END {
        for (k in n) { for (i = 1; i <= n[k]; i++) a[i] = p50[k, i]; m50[k] = med(a, n[k])
            for (i = 1; i <= n[k]; i++) a[i] = p99[k, i]; m99[k] = med(a, n[k])
            for (i = 1; i <= n[k]; i++) a[i] = rps[k, i]; mrps[k] = med(a, n[k]) }
        for (i = 1; i <= n["vram"]; i++) { q[i] = by[i, "vram"] / by[i, "nginx"]; line = line sprintf(" %.2f", q[i]) }
        printf "medians: direct %.0f/%.0f us %.0f req/s; vram %.0f/%.0f us %.0f req/s; nginx %.0f/%.0f us %.0f req/s\n",
            m50["direct"], m99["direct"], mrps["direct"], m50["vram"], m99["vram"], mrps["vram"],
            m50["nginx"], m99["nginx"], mrps["nginx"]
        printf "added by vram:  p50 %+.0f us, p99 %+.0f us; throughput %.2fx direct, %.2fx nginx\n",
            m50["vram"] - m50["direct"], m99["vram"] - m99["direct"], mrps["vram"] / mrps["direct"], mrps["vram"] / mrps["nginx"]
        printf "added by nginx: p50 %+.0f us, p99 %+.0f us; throughput %.2fx direct\n",
            m50["nginx"] - m50["direct"], m99["nginx"] - m99["direct"], mrps["nginx"] / mrps["direct"]
        printf "vram/nginx throughput, round by round:%s (median %.2f)\n", line, med(q, n["vram"])
    }' "$T/sum"
grep -c "proxy bench" "$T/serve.log" | xargs echo "requests logged by the daemon:"
