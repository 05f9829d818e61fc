# proxy_setup.sh: sourced by proxy_bench.sh and proxy_anatomy.sh. Starts,
# in a temporary folder: a trivial backend (nginx answering "ok") as a
# model of `vram serve` (against the simulated driver when $B/sim exists
# and REAL is unset, else the machine's own), and nginx as a plain reverse
# proxy (keep-alive upstream, buffering off, one worker like the daemon's
# one loop) in front of the same backend. Leaves: URL[direct|vram|nginx],
# DAEMON (its pid), RPW (the nginx proxy's worker), BW (the backend's
# worker), RUNWRK (how to start wrk), T; stops everything on exit.
# B: the build folder (default build/); NGINX_BIN, WRK_BIN: the programs
# (not NGINX: nginx reads that variable for sockets it inherits).
# PIN=1: each proxy alone on the last core, load generator and backend on
# the others (a proxy's throughput is then its own cost per request).
B=${B:-$PWD/build}
NGINX_BIN=${NGINX_BIN:-nginx}
WRK_BIN=${WRK_BIN:-wrk}
T=$(mktemp -d)
# A root daemon runs its models as vram-model (serve_user.sh makes it on a
# bare GPU machine): the programs the model runs, the cap's library and
# the backend's files put where that user reaches them, whichever build B
# is (an earlier one's too).
if [ "$(id -u)" = 0 ] && { [ ! -d "$B/sim" ] || [ -n "${REAL:-}" ]; }; then
    . "$(dirname "${BASH_SOURCE:-$0}")/serve_user.sh"
    chmod 1777 "$T"
    mkdir -p "$T/b"
    cp "$B/vram" "$B/libvramcap.so" "$T/b/"
    B=$T/b
    if [ -f "$NGINX_BIN" ]; then
        cp -a "$(dirname "$NGINX_BIN")" "$T/tools"
        NGINX_BIN=$T/tools/$(basename "$NGINX_BIN")
    fi
    chmod -R a+rX "$T/b" "$T/tools" 2>/dev/null || true
fi
BASE=$((30000 + $$ % 10000))
# nginx opens its compiled-in log and temporary paths unless told otherwise
NGX_PATHS="client_body_temp_path $T/ngx-body; proxy_temp_path $T/ngx-proxy;
    fastcgi_temp_path $T/ngx-fcgi; uwsgi_temp_path $T/ngx-uwsgi; scgi_temp_path $T/ngx-scgi;"
cat >"$T/backend.tmpl" <<CONF
worker_processes 1;
pid $T/backend-PORT.pid;
error_log $T/backend-PORT.err;
events { worker_connections 1024; }
http {
    access_log off;
    $NGX_PATHS
    keepalive_requests 1000000;
    server { listen 127.0.0.1:PORT; location / { return 200 "ok\n"; } }
}
CONF
cat >"$T/backend.sh" <<SH
sed "s/PORT/\$PORT/g" $T/backend.tmpl >$T/backend.conf && exec $NGINX_BIN -e $T/backend.err -c $T/backend.conf -g "daemon off;"
SH
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $BASE
listen = 127.0.0.1:$((BASE + 100))

[model bench]
command = sh $T/backend.sh
vram = 1M
idle = 1h
CONF
if [ -d "$B/sim" ] && [ -z "${REAL:-}" ]; then
    export VRAM_SIM=$PWD/examples/workstation.json VRAM_SIM_STATE=$T/ledger LD_LIBRARY_PATH=$B/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# in a session of its own, as under systemd and as nginx puts itself: with
# the kernel's autogroup scheduling a session is a group that gets its fair
# share of the CPU, and a daemon left in the load generator's session
# shares one share with wrk (measured: preempted 0.36 times per request,
# cores idle, 0.93x nginx's throughput; 0.01 times for nginx)
setsid "$B/vram" serve --config "$T/vram.conf" 2>"$T/serve.log" &
DAEMON=$!
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 1; [ -f $T/rp.pid ] && kill $(cat $T/rp.pid); [ -n "${KEEP:-}" ] || rm -rf $T' EXIT
export VRAM_SOCKET=$T/vram.sock
for _ in $(seq 1 200); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.05; done
"$B/vram" load bench --timeout 30s >/dev/null || { echo "the backend did not start: $(tail -3 "$T/logs/bench.log" 2>/dev/null)" >&2; exit 1; }
PORT=$("$B/vram" ps --json | tr -d ' \n' | sed 's/.*"port":\([0-9]*\).*/\1/')
RP=$((BASE + 200))
cat >"$T/rp.conf" <<CONF
worker_processes 1;
pid $T/rp.pid;
error_log $T/rp.err;
events { worker_connections 1024; }
http {
    access_log off;
    $NGX_PATHS
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
"$NGINX_BIN" -e "$T/rp.err" -c "$T/rp.conf"
sleep 0.3
RPW=$(pgrep -P "$(cat "$T/rp.pid")" | head -1)
BM=$(pgrep -f "$T/backend.conf" | head -1)
BW=$(pgrep -P "$BM" | head -1)
RUNWRK=("$WRK_BIN")
if [ -n "${PIN:-}" ]; then
    LAST=$(($(nproc) - 1))
    for p in $DAEMON "$(cat "$T/rp.pid")" $RPW; do taskset -apc "$LAST" "$p" >/dev/null; done
    for p in $BM $BW; do taskset -apc 0-$((LAST - 1)) "$p" >/dev/null; done
    RUNWRK=(taskset -c 0-$((LAST - 1)) "$WRK_BIN")
fi
declare -A URL=([direct]="http://127.0.0.1:$PORT/ok" [vram]="http://127.0.0.1:$((BASE + 100))/m/bench/ok"
    [nginx]="http://127.0.0.1:$RP/ok")
