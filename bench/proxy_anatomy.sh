#!/bin/bash
# proxy_anatomy.sh: where a proxied request's cost goes, vram serve's proxy
# and nginx's side by side under the same throughput load (wrk, 64
# connections, SECONDS each; bench/proxy_setup.sh starts everything).
# Per request, for each proxy: system calls (perf, when it can count them),
# CPU time (user, system), how often the proxy was switched out while it
# could run (preempted) and how long it waited to run, TCP segments sent
# (nstat); and how busy each core was.
# SCHED=N: also what ran in place of the proxies when they were switched
# out (perf sched_switch, the N most frequent). PROFILE=N: the daemon's N
# hottest functions (perf record).
# Usage: bench/proxy_anatomy.sh [SECONDS]   (default 3)
set -eu
cd "$(dirname "$0")/.."
D=${1:-3}
. bench/proxy_setup.sh
echo "machine: $(nproc) cores, $(uname -r); wrk -t2 -c64 $D s per proxy${PIN:+, pinned}; $(date -u +%FT%TZ)"
perf stat -e raw_syscalls:sys_enter -- true >/dev/null 2>&1 && PERF=1 || PERF=
stat_of() { awk '{ print $14 + 0, $15 + 0 }' "/proc/$1/stat"; }
invol() { awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "/proc/$1/status"; }
for k in vram nginx; do
    if [ $k = vram ]; then P=$DAEMON; else P=$RPW; fi
    read -r U0 S0 < <(stat_of "$P")
    I0=$(invol "$P")
    read -r _ W0 N0 <"/proc/$P/schedstat"
    grep '^cpu[0-9]' /proc/stat >"$T/cpu0"
    nstat -n >/dev/null 2>&1 || true
    if [ -n "$PERF" ]; then
        perf stat -x, -e raw_syscalls:sys_enter -p "$P" -o "$T/perf.$k" -- \
            "${RUNWRK[@]}" -t2 -c64 -d"$D"s "${URL[$k]}" >"$T/w.$k"
    else
        "${RUNWRK[@]}" -t2 -c64 -d"$D"s "${URL[$k]}" >"$T/w.$k"
        : >"$T/perf.$k"
    fi
    read -r U1 S1 < <(stat_of "$P")
    I1=$(invol "$P")
    read -r _ W1 N1 <"/proc/$P/schedstat"
    grep '^cpu[0-9]' /proc/stat >"$T/cpu1"
    nstat -z 2>/dev/null >"$T/nstat.$k" || : >"$T/nstat.$k"
    REQ=$(awk '/requests in/ { print $1 }' "$T/w.$k")
    awk -F, -v k=$k -v r="$REQ" -v d="$D" -v hz="$(getconf CLK_TCK)" -v u=$((U1 - U0)) -v s=$((S1 - S0)) \
        -v pre=$((I1 - I0)) -v runs=$((N1 - N0)) -v wait=$((W1 - W0)) '
        $3 == "raw_syscalls:sys_enter" { sc = sprintf("%.2f system calls, ", $1 / r) }
        END { printf "%-6s %.0f req/s; per request: %scpu %.2f us (user %.2f, system %.2f), " \
                "preempted %.3f times, %.3f runs, waited %.2f us to run\n", k, r / d, sc,
                (u + s) / hz / r * 1e6, u / hz / r * 1e6, s / hz / r * 1e6, pre / r, runs / r, wait / r / 1000 }' "$T/perf.$k"
    awk -v r="$REQ" '$1 == "TcpOutSegs" { printf "       TCP segments sent per request (all sockets): %.2f\n", $2 / r }' "$T/nstat.$k"
    awk 'NR == FNR { for (i = 2; i <= NF; i++) a[$1, i] = $i; next }
        { t = 0; for (i = 2; i <= NF; i++) t += $i - a[$1, i]; idle = $5 - a[$1, 5] + $6 - a[$1, 6]
          line = line sprintf(" %s %.0f%% (softirq %.0f)", $1, 100 * (t - idle) / t, 100 * ($8 - a[$1, 8]) / t) }
        END { print "       cores busy:" line }' "$T/cpu0" "$T/cpu1"
done
if [ -n "${SCHED:-}" ] && [ -n "$PERF" ]; then
    for k in vram nginx; do
        "${RUNWRK[@]}" -t2 -c64 -d3s "${URL[$k]}" >"$T/sw.$k" &
        sleep 1
        perf record -q -e sched:sched_switch -a -o "$T/sw.data" -- sleep 1 >/dev/null 2>&1
        wait $!
        echo "$k: switches in 1 s, by core (R: the one switched out could still run)"
        perf script -i "$T/sw.data" -F cpu,trace 2>/dev/null | awk '
            { pc = ps = nc = ""
              if (match($0, /prev_comm=[^ ]+/)) pc = substr($0, RSTART + 10, RLENGTH - 10)
              if (match($0, /prev_state=[^ ]+/)) ps = substr($0, RSTART + 11, RLENGTH - 11)
              if (match($0, /next_comm=[^ ]+/)) nc = substr($0, RSTART + 10, RLENGTH - 10)
              n[$1 " " pc " (" ps ") -> " nc]++ }
            END { for (x in n) printf "  %7d %s\n", n[x], x }' | sort -rn | head -"$SCHED"
    done
fi
if [ -n "${PROFILE:-}" ] && [ -n "$PERF" ]; then
    perf record -q -g -o "$T/prof.data" -p $DAEMON -- "${RUNWRK[@]}" -t2 -c64 -d"$D"s "${URL[vram]}" >/dev/null 2>&1
    perf report -i "$T/prof.data" --no-children --sort dso,sym --stdio 2>/dev/null |
        grep -E '^ +[0-9]' | head -"$PROFILE"
fi
