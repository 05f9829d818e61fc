#!/bin/bash
# The proxy of vram serve against clients that idle, trickle or take every
# descriptor (issue 16), on the simulated driver, the daemon under a low
# descriptor limit (ulimit -n 160) and client_timeout = 2s. Asserts: an
# idle connection, a request head and a request body that trickle are
# closed after the timeout; a stream whose tokens come slower than the
# timeout is not; hundreds of trickling clients leave normal requests and
# vram ps working, and are closed in turn; every listener has its share of
# the descriptors (issue 28): while its metrics address or its control
# socket holds more idle connections than the limit, the others answer,
# and none runs out (no warning); at a limit too small for the shares,
# running out only pauses a listener and is said once; the log stays small.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-limits"
TM="$T/testmodel-limits"
TR="$SRC/tests/helpers/trickle.py"
daemon_env 19 900
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
metrics = localhost:$((LISTEN + 1))
client_timeout = 2s

[model tm]
command = $TM --bytes 64M --chunks 3 --chunk-ms 3000
vram = 1G
swap = driver
CONF
(ulimit -n 160 && exec "$VRAM" serve --config "$T/vram.conf") >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.5; pkill -9 -f "$TM" 2>/dev/null; [ -n "${KEEP:-}" ] && cp -r "$T" /tmp/proxy_limits-keep; cleanup' EXIT
wait_for 10 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
"$VRAM" load tm >/dev/null

# closed() FD SECONDS: whether the server closes the connection on FD
# within SECONDS (what it sends first, a 408, is read and dropped)
closed() { timeout "$2" cat <&"$1" >/dev/null; [ $? -ne 124 ]; }
exec 3<>"/dev/tcp/127.0.0.1/$LISTEN"
expect_eq "an idle connection is closed after client_timeout" "$(closed 3 6 && echo closed)" closed
exec 3>&-
exec 3<>"/dev/tcp/127.0.0.1/$LISTEN"
(for c in G E T ' ' / m; do printf %s "$c"; sleep 0.5; done >&3) 2>/dev/null &
expect_eq "a trickling request head is closed" "$(closed 3 6 && echo closed)" closed
exec 3>&-
exec 3<>"/dev/tcp/127.0.0.1/$LISTEN"
printf 'POST /m/tm/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n' >&3
(for _ in $(seq 20); do printf x; sleep 0.5; done >&3) 2>/dev/null &
HEAD=$(timeout 6 head -1 <&3 | tr -d '\r')
expect_eq "a trickling request body is answered 408" "$HEAD" "HTTP/1.1 408 Request Timeout"
exec 3>&-

# a stream whose tokens come 3 s apart, over the 2 s timeout: whole
S=$(curl -sN -m 30 "$P/m/tm/stream")
expect_eq "a stream slower than client_timeout arrives whole" \
    "$(grep -c '"chunk"' <<<"$S") $(grep -c DONE <<<"$S")" "3 1"

# 300 trickling clients against 160 descriptors: the proxy takes what it
# may (a quarter of the limit stays for the rest), closes them in turn,
# and serves the others meanwhile
python3 "$TR" tcp 127.0.0.1 "$LISTEN" 300 12 >"$T/trickled" &
TRICKLE=$!
sleep 2
OKS=0
PS=0
for _ in 1 2 3; do
    [ "$(curl -s -m 20 "$P/m/tm/echo")" = ok ] && OKS=$((OKS + 1))
    "$VRAM" ps >/dev/null 2>&1 && PS=$((PS + 1))
done
expect_eq "under the trickling flood, requests are served" "$OKS" 3
expect_eq "under the trickling flood, vram ps works" "$PS" 3
wait $TRICKLE
expect_match "the trickling clients were closed in turn ($(cat "$T/trickled"))" "$(cat "$T/trickled")" '^[0-9]{3,}$'

# every listener its share: a flood of idle connections to one, more than
# the whole limit, leaves the others answering while it lasts
M="http://127.0.0.1:$((LISTEN + 1))"
fds() { ls /proc/$DAEMON/fd | wc -l; }
# the flood in the background, awaited until every connection is asked for
# and the daemon took its first ones (it takes what it will in one go)
flood() {
    rm -f "$T/ready"
    before=$(fds)
    TRICKLE_READY="$T/ready" python3 "$TR" "$@" >"$T/flooded" &
    FLOOD=$!
    wait_for 10 test -s "$T/ready"
    wait_for 10 sh -c "[ \$(ls /proc/$DAEMON/fd | wc -l) -ge $((before + 4)) ]"
}
# (each flood lasts 10 s; the others are asked within 3 s, twice)
flood idle 127.0.0.1 $((LISTEN + 1)) 300 10
expect_eq "the metrics address flooded: vram ps works" \
    "$(timeout 3 "$VRAM" ps >/dev/null 2>&1 && echo yes)" yes
expect_eq "the metrics address flooded: the proxy serves" "$(curl -s -m 3 "$P/m/tm/echo")" ok
wait $FLOOD
flood unix "$T/vram.sock" 300 10
expect_eq "the control socket flooded: the proxy serves" "$(curl -s -m 3 "$P/m/tm/echo")" ok
expect_eq "the control socket flooded: /metrics answers" \
    "$(curl -s -m 3 "$M/metrics" | grep -c '^vram_build_info')" 1
wait $FLOOD
kill -0 $DAEMON 2>/dev/null && ALIVE=yes || ALIVE=no
expect_eq "the daemon lives through the floods" "$ALIVE" yes
expect_eq "after the floods, vram ps works" "$(wait_for 10 "$VRAM" ps >/dev/null 2>&1 && echo yes)" yes
expect_eq "after the floods, /metrics answers" \
    "$(wait_for 10 sh -c "curl -s -m 2 '$M/metrics' | grep -q '^vram_build_info'" && echo yes)" yes
expect_eq "no listener ran out of descriptors: each stopped at its share" \
    "$(grep -c 'out of file descriptors' "$T/serve.log")" 0

# a limit too small for the shares (40): running out of descriptors
# pauses the listener instead of spinning, is said once, and passes
sed -e "s|^socket = .*|socket = $T/small.sock|" -e "s|^state = .*|state = $T/small.db|" \
    -e "s|^listen = .*|listen = 127.0.0.1:$((LISTEN + 2))|" -e "/^metrics/d" \
    -e "s|^port_base = .*|port_base = $((PORTS + 300))|" "$T/vram.conf" >"$T/small.conf"
(ulimit -n 40 && exec "$VRAM" serve --config "$T/small.conf") >"$T/small.log" 2>&1 &
SMALL=$!
JOBS="$JOBS $SMALL"
wait_for 10 "$VRAM" ps --socket "$T/small.sock" >/dev/null 2>&1
rm -f "$T/ready"
TRICKLE_READY="$T/ready" python3 "$TR" unix "$T/small.sock" 200 3 >"$T/flooded" &
FLOOD=$!
wait_for 10 test -s "$T/ready"
kill -0 $SMALL 2>/dev/null && ALIVE=yes || ALIVE=no
wait $FLOOD
expect_eq "at 40 descriptors, the daemon lives through a flood of its socket" "$ALIVE" yes
expect_eq "... and serves after it" \
    "$(wait_for 10 "$VRAM" ps --socket "$T/small.sock" >/dev/null 2>&1 && echo yes)" yes
WARN=$(grep -c 'out of file descriptors' "$T/small.log")
expect_match "running out of descriptors is said, once a minute ($WARN)" "$WARN" '^[12]$'
kill -TERM $SMALL
expect_match "the log stays small ($(wc -c <"$T/serve.log") bytes)" "$(wc -c <"$T/serve.log")" '^[0-9]{1,5}$'

kill -TERM "$DAEMON"
wait_for 15 sh -c "! kill -0 $DAEMON 2>/dev/null"
finish
