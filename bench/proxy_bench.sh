#!/bin/bash
# proxy_bench.sh: what the model proxy of `vram serve` adds to a request,
# side by side in one run: a trivial backend (nginx answering "ok") called
# directly, through vram serve's proxy (/m/bench/ok), and through nginx
# configured as a plain reverse proxy (keep-alive upstream) in front of the
# same backend. wrk measures latency (1 connection: p50, p99) and
# throughput (64 connections). The daemon runs against the simulated
# driver (this needs no GPU) and logs every request, as it does in use.
# Usage: bench/proxy_bench.sh [SECONDS]   (needs wrk and nginx; build/ built)
set -eu
cd "$(dirname "$0")/.."
D=${1:-10}
B=$PWD/build
T=$(mktemp -d)
BASE=$((30000 + $$ % 10000))
cat >"$T/backend.tmpl" <<'CONF'
worker_processes 1;
pid TMP/backend-PORT.pid;
error_log TMP/backend-PORT.err;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:PORT; location / { return 200 "ok\n"; } }
}
CONF
sed -i "s|TMP|$T|g" "$T/backend.tmpl"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $BASE
listen = 127.0.0.1:$((BASE + 100))

[model bench]
command = sh -c 'sed "s/PORT/\$PORT/g" $T/backend.tmpl >$T/backend.conf && exec nginx -c $T/backend.conf -g "daemon off;"'
vram = 1M
idle = 1h
CONF
VRAM_SIM=$PWD/examples/workstation.json VRAM_SIM_STATE=$T/ledger LD_LIBRARY_PATH=$B/sim \
    "$B/vram" serve --config "$T/vram.conf" 2>"$T/serve.log" &
DAEMON=$!
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 1; [ -f $T/rp.pid ] && kill $(cat $T/rp.pid); [ -n "${KEEP:-}" ] || rm -rf $T' EXIT
for _ in $(seq 1 100); do VRAM_SOCKET=$T/vram.sock "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.05; done
VRAM_SOCKET=$T/vram.sock "$B/vram" load bench >/dev/null
PORT=$(VRAM_SOCKET=$T/vram.sock "$B/vram" ps --json | jq '.models[0].port')
RP=$((BASE + 200))
cat >"$T/rp.conf" <<CONF
worker_processes 1;
pid $T/rp.pid;
error_log $T/rp.err;
events { worker_connections 1024; }
http {
    access_log off;
    upstream backend { server 127.0.0.1:$PORT; keepalive 64; }
    server {
        listen 127.0.0.1:$RP;
        location / {
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
        }
    }
}
CONF
nginx -c "$T/rp.conf"
sleep 0.3

declare -A URL=([direct]="http://127.0.0.1:$PORT/ok" [vram]="http://127.0.0.1:$((BASE + 100))/m/bench/ok"
    [nginx]="http://127.0.0.1:$RP/ok")
# wrk --latency's "     50%    1.23ms" -> microseconds
us() { awk -v p="$1" '$1 == p { v = $2; if (v ~ /us$/) { sub(/us/, "", v); print v + 0 }
    else if (v ~ /ms$/) { sub(/ms/, "", v); print v * 1000 } else { sub(/s/, "", v); print v * 1e6 } }'; }
echo "machine: $(nproc) cores, $(uname -r); wrk $D s per run; $(date -u +%FT%TZ)"
printf '%-7s %10s %10s %12s\n' path p50_us p99_us req_per_s
for k in direct vram nginx; do
    wrk -t1 -c1 -d"$D"s --latency "${URL[$k]}" >"$T/lat.$k"
    wrk -t2 -c64 -d"$D"s "${URL[$k]}" >"$T/tput.$k"
    P50=$(us 50% <"$T/lat.$k"); P99=$(us 99% <"$T/lat.$k")
    RPS=$(awk '/Requests\/sec/ { print $2 }' "$T/tput.$k")
    printf '%-7s %10s %10s %12s\n' "$k" "$P50" "$P99" "$RPS"
    echo "$k $P50 $P99 $RPS" >>"$T/sum"
done
awk '{ p50[$1] = $2; p99[$1] = $3; rps[$1] = $4 }
    END {
        printf "added by vram:  p50 %+.0f us, p99 %+.0f us; throughput %.2fx direct, %.2fx nginx\n",
            p50["vram"] - p50["direct"], p99["vram"] - p99["direct"], rps["vram"] / rps["direct"], rps["vram"] / rps["nginx"]
        printf "added by nginx: p50 %+.0f us, p99 %+.0f us; throughput %.2fx direct\n",
            p50["nginx"] - p50["direct"], p99["nginx"] - p99["direct"], rps["nginx"] / rps["direct"]
    }' "$T/sum"
grep -c "proxy bench" "$T/serve.log" | xargs echo "requests logged by the daemon:"
