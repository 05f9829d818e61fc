#!/bin/bash
# Many models on one card with the default configuration (issue 15):
# a model that does not fit makes room at once by suspending the least
# recently used one (fast swap, into host memory the daemon gives that
# model alone, never another's); a
# proxied request resumes a suspended model without waiting for anything
# to idle, and is reported everywhere; keep-alive and Ollama's per-request
# keep_alive give memory back; the suspended models' host memory stays
# within host_budget; model processes inherit no descriptor; unload ends a
# model's setsid children; a daemon killed during a start leaves exactly
# one process after restart; the daemon does not spin while models swap.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-switch"
TM="$T/testmodel-switch"
daemon_env 13 900
# GPU 0 holds two of a, b, c; the host pool holds what fast swap moves of them
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 0:1400M
host_budget = 1G
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
CONF
for m in a b c; do
    printf '\n[model %s]\ncommand = %s --bytes 256M --chunks 3 --chunk-ms 50\nvram = 600M\ngpu = 0\n' \
        "$m" "$TM" >>"$T/vram.conf"
done
printf '\n[model k]\ncommand = %s --bytes 32M\nvram = 100M\ngpu = 1\nkeep_alive = 1s\n' "$TM" >>"$T/vram.conf"
# s's child: a sleep of this test's own (tests run in parallel, and so may this one)
SLEEPER="sleep 9876$$"
printf '\n[model s]\ncommand = sh -c "setsid %s & exec %s --bytes 32M"\nvram = 100M\ngpu = 1\n' \
    "$SLEEPER" "$TM" >>"$T/vram.conf"
printf '\n[model w]\ncommand = %s --bytes 32M --startup 4\nvram = 100M\ngpu = 1\n' "$TM" >>"$T/vram.conf"
printf '\n[model q]\ncommand = %s --bytes 16M\nvram = 50M\ngpu = 1\n' "$TM" >>"$T/vram.conf"
# z's parent closes inherited descriptors and puts another file at 3
# before the server starts (Python's subprocess and multiprocessing close
# inherited descriptors: vLLM's workers, a launcher script)
printf '\n[model z]\ncommand = sh -c "exec 3</dev/null; exec %s --bytes 32M"\nvram = 100M\ngpu = 1\n' \
    "$TM" >>"$T/vram.conf"

run() { OUT=$("$@" 2>&1); RC=$?; }
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
start_daemon() {
    "$VRAM" serve --config "$T/vram.conf" >>"$T/serve.log" 2>&1 &
    DAEMON=$!
    JOBS="$JOBS $DAEMON"
    wait_for 10 "$VRAM" ps >/dev/null 2>&1
}
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.3; pkill -9 -f "$TM" 2>/dev/null; pkill -9 -fx "$SLEEPER" 2>/dev/null; [ -n "${KEEP:-}" ] && cp -r "$T" /tmp/switch-keep; cleanup' EXIT
start_daemon || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; }
curl -sN -m 120 --unix-socket "$T/vram.sock" http://x/v1/events >"$T/events" 2>/dev/null &
JOBS="$JOBS $!"
wait_for 5 grep -q '^: vram serve events' "$T/events"

# 1. a third model that does not fit: loads by suspending the least recently used
"$VRAM" load a >/dev/null
"$VRAM" load b >/dev/null
run "$VRAM" load c --timeout 30s
expect_match "a third model loads, default configuration" "$OUT" "^c: ready on GPU 0"
expect_eq "the least recently used one (a) made room, suspended" "$(state a state) $(state b state)" \
    "suspended ready"
expect_eq "by fast swap" "$(state a suspended_by)" fast

# 2. a proxied request for the suspended model: answered, not after an idle
#    time; the resume is reported in the log, the events, vram ps, /metrics
OUT=$(curl -s -m 30 "$P/v1/chat/completions" -d '{"model":"a","stream":true,"messages":[]}')
expect_match "a proxied request for a suspended model is answered" "$OUT" '"chunk":2'
expect_eq "it resumed a" "$(state a resumes)" 1
wait_for 3 grep -q 'a: resumed' "$T/serve.log"
expect_match "the log says a resumed, with the time" "$(cat "$T/serve.log")" 'a: resumed: GPU 0 \([0-9.]+ s\)'
expect_match "/v1/events says so" "$(cat "$T/events")" '"model":"a","event":"resumed"'
expect_match "/metrics counts it" "$(curl -s --unix-socket "$T/vram.sock" http://x/metrics)" \
    'vram_model_transitions_total\{model="a",kind="resume"\} 1'
two_left() { [ "$(for m in b c; do state $m state; done | grep -c suspended)" = 1 ]; }
wait_for 10 two_left
expect_eq "and another made room" "$(for m in b c; do state $m state; done | grep -c suspended)" 1
expect_match "the daemon gives host memory for fast swap, within host_budget" \
    "$(cat "$T/serve.log")" 'host memory for fast swap: up to 1.00 GiB'
expect_eq "... and no model pinned a pool of its own" \
    "$(grep -l 'growing\|cannot map' "$T"/logs/*.log 2>/dev/null | wc -l)" 0
# a suspended model's bytes are in chunks only its own process maps: no
# other model's process can read or write them, whatever user it runs as
# (the daemon's host memory as one memfd every model mapped let any model
# read and overwrite every other's suspended weights)
chunks_of() { awk '$6 ~ /^\/memfd:vram-host/ { print $5 }' "/proc/$(state "$1" pid)/maps" 2>/dev/null | sort -u; }
SUSP=$(for m in b c; do [ "$(state $m state)" = suspended ] && echo $m; done | head -1)
OTHERS=$(for m in a b c; do [ "$m" != "$SUSP" ] && echo $m; done)
# (or, once host memory is short, in a spill file of the disk tier that
# only its process holds open: docs/serve.md)
files_of() { ls -l "/proc/$(state "$1" pid)/fd" 2>/dev/null | grep -o "$T/spill/[^ ]*" | sort -u; }
MINE=$( (chunks_of "$SUSP"; files_of "$SUSP") | sort -u)
THEIRS=$(for m in $OTHERS; do chunks_of $m; files_of $m; done | sort -u)
expect_eq "the suspended model $SUSP holds its bytes in chunks of host memory or its spill file ($(state "$SUSP" tier))" \
    "$([ -n "$MINE" ] && echo yes)" yes
expect_eq "... that no other model's process maps or holds" \
    "$(comm -12 <(echo "$MINE") <(echo "$THEIRS") | grep -c .)" 0

# 3. the suspended models' host memory stays within host_budget (1G)
HOST=$("$VRAM" ps --json | jq '[.models[] | select(.state == "suspended") | .host_bytes] | add // 0')
expect_eq "suspended models hold at most host_budget of host RAM ($HOST)" \
    "$([ "$HOST" -le $((1024 * MiB)) ] && echo yes)" yes

# 4. Ollama's keep_alive 0: the model goes as soon as the answer is done
B_OR_C=$(for m in b c; do [ "$(state $m state)" = ready ] && echo $m; done | head -1)
OUT=$(curl -s -m 30 "$P/api/chat" -d "{\"model\":\"$B_OR_C\",\"keep_alive\":0,\"messages\":[]}")
# off the GPU: suspended, or stopped when the host pool is full
gone() { case "$(state "$1" state)" in suspended | stopped) return 0 ;; esac; return 1; }
wait_for 10 gone "$B_OR_C"
expect_match "keep_alive 0: $B_OR_C leaves the GPU after its answer" "$(state "$B_OR_C" state)" \
    '^(suspended|stopped)$'
run curl -s -m 5 "$P/api/chat" -d '{"model":"a","keep_alive":"soon","messages":[]}'
expect_match "a keep_alive that is no duration is refused" "$OUT" 'keep_alive'

# 5. keep-alive with no pressure: k (keep_alive = 1s) gives its memory back
"$VRAM" load k >/dev/null
wait_for 10 gone k
expect_match "keep_alive = 1s: k leaves the GPU once unused that long" "$(state k state)" \
    '^(suspended|stopped)$'

# 6. a model process shares no socket or pipe with the daemon (an
#    inherited one would keep the daemon's events alive in its epoll set)
APID=$(state a pid)
files() { ls -l /proc/"$1"/fd 2>/dev/null | grep -o '\(socket\|pipe\):\[[0-9]*\]' | sort -u; }
files "$DAEMON" >"$T/dfd"
files "$APID" >"$T/mfd"
expect_eq "model processes inherit no socket or pipe of the daemon's" \
    "$(comm -12 "$T/dfd" "$T/mfd" | tr '\n' ' ')" ""
expect_eq "(the check sees the daemon's sockets)" "$([ -s "$T/dfd" ] && echo yes)" yes

# 7. unload ends a child the model's command put in a session of its own
"$VRAM" load s >/dev/null
wait_for 5 pgrep -fx "$SLEEPER" >/dev/null
expect_eq "s's setsid child runs" "$(pgrep -fxc "$SLEEPER")" 1
"$VRAM" unload s >/dev/null
wait_for 10 sh -c "! pgrep -fx '$SLEEPER' >/dev/null"
expect_eq "unload s: its setsid child is gone too" "$(pgrep -fxc "$SLEEPER")" 0

# 7b. a model stopped the moment it is started (its TERM reaches the child
#     between fork and exec, with the daemon's signal handlers): the
#     daemon runs on (it once took the child's TERM for its own and quit)
for _ in $(seq 1 15); do
    curl -s -m 20 --unix-socket "$T/vram.sock" -X POST http://x/v1/models/q/load -o /dev/null &
    L=$!
    curl -s -m 20 --unix-socket "$T/vram.sock" -X POST http://x/v1/models/q/unload -o /dev/null
    wait $L
done
expect_eq "models stopped as they start: the daemon runs on" \
    "$(kill -0 "$DAEMON" 2>/dev/null && "$VRAM" ps >/dev/null && echo running)" running
expect_eq "... and never began to exit" "$(grep -c 'stopping the models' "$T/serve.log")" 0
"$VRAM" unload q >/dev/null 2>&1

# 7c. a server whose parent closed its descriptors moves by fast swap: its
#     host memory comes with the daemon's request, nothing is inherited
"$VRAM" load z >/dev/null
run "$VRAM" suspend z
expect_eq "z (descriptors closed by its parent) suspended by fast swap" \
    "$(state z state) $(state z suspended_by)" "suspended fast"
OUT=$(curl -s -m 30 "$P/v1/chat/completions" -d '{"model":"z","stream":true,"messages":[]}')
expect_match "z answers after coming back" "$OUT" '"chunk":2'
expect_eq "... every byte of it intact" \
    "$(curl -s -m 20 "http://127.0.0.1:$(state z port)/checksum" | jq -c .intact)" true
"$VRAM" unload z >/dev/null 2>&1

# 8. the daemon does not spin while models swap: a 30 s trace of requests
#    that switch models every second
# the loop's thread: the host pool's threads zero the pages the swaps use,
# work that scales with the bytes moved, not a spin
ticks() { awk '{print $14 + $15}' /proc/"$DAEMON"/task/"$DAEMON"/stat; }
T0=$(ticks)
S0=$(date +%s.%N)
for i in $(seq 1 30); do
    m=$(echo a b c | cut -d' ' -f$((i % 3 + 1)))
    curl -s -m 20 "$P/v1/chat/completions" -d "{\"model\":\"$m\",\"messages\":[]}" >/dev/null
    sleep 0.5
done
T1=$(ticks)
S1=$(date +%s.%N)
CPU=$(echo "$T0 $T1 $S0 $S1 $(getconf CLK_TCK)" | awk '{printf "%.1f", ($2 - $1) / $5 / ($4 - $3) * 100}')
SWITCHES=$(grep -c 'resumed' "$T/serve.log")
expect_eq "the trace switched models (resumes: $SWITCHES)" "$([ "$SWITCHES" -ge 10 ] && echo yes)" yes
expect_eq "the daemon's CPU over the trace is under 5 % ($CPU %)" \
    "$(awk -v c="$CPU" 'BEGIN { print (c < 5) ? "yes" : "no" }')" yes
for m in a b c; do
    PORT=$(state $m port)
    [ "$(state $m state)" = ready ] &&
        expect_eq "$m's memory intact after the trace" \
            "$(curl -s -m 10 "http://127.0.0.1:$PORT/checksum" | jq -r .intact)" true
done

# 9. a daemon killed while a model starts: after the restart, exactly one
#    process of that model, never two
"$VRAM" load w --timeout 1s >/dev/null 2>&1
wait_for 5 sh -c "pgrep -f '$TM --bytes 32M --startup 4' >/dev/null"
kill -9 "$DAEMON"
wait_for 5 sh -c "! kill -0 $DAEMON 2>/dev/null"
start_daemon
run "$VRAM" load w --timeout 30s
expect_match "after the restart, w loads" "$OUT" "^w: ready"
expect_eq "exactly one process of w" "$(pgrep -fc "$TM --bytes 32M --startup 4")" 1

kill -TERM "$DAEMON"
wait_for 15 sh -c "! kill -0 $DAEMON 2>/dev/null"
expect_eq "SIGTERM: no model process left" "$(pgrep -fc "$TM")" 0
finish
