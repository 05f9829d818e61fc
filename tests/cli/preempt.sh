#!/bin/bash
# Time slices (issue 22) against the simulated driver: two models that do
# not fit together, each answering a long streamed request, take turns on
# the GPU (each is suspended mid-request by fast swap, its stream held,
# then resumed); both streams arrive whole and right, their pauses longer
# than client_timeout (every token read
# through the GPU and checked); a short request to either is answered
# within about a slice and a swap; a pinned model, and one with
# preempt = no, are never suspended mid-request: the other waits, as
# before.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-preempt"
TM="$T/testmodel-preempt"
daemon_env 17 900
# GPU 0 holds one of x, y (and one of pin/nope on GPU 1)
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 0:1000M,1:1000M
host_budget = 2G
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
min_resident = 0
; shorter than a held stream's pause: it must not close a held stream
client_timeout = 1s
CONF
for m in x y; do
    printf '\n[model %s]\ncommand = %s --bytes 256M --chunks 40 --chunk-ms 500\nvram = 600M\ngpu = 0\nslice = 2s\n' \
        "$m" "$TM" >>"$T/vram.conf"
done
printf '\n[model pin]\ncommand = %s --bytes 256M --chunks 10 --chunk-ms 500\nvram = 600M\ngpu = 1\npinned = yes\nslice = 1s\n' "$TM" >>"$T/vram.conf"
printf '\n[model nope]\ncommand = %s --bytes 256M --chunks 10 --chunk-ms 500\nvram = 600M\ngpu = 1\npreempt = no\nslice = 1s\n' "$TM" >>"$T/vram.conf"
printf '\n[model other]\ncommand = %s --bytes 256M --chunks 2 --chunk-ms 50\nvram = 600M\ngpu = 1\n' "$TM" >>"$T/vram.conf"

run() { OUT=$("$@" 2>&1); RC=$?; }
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.3; pkill -9 -f "$TM" 2>/dev/null; [ -n "${KEEP:-}" ] && cp -r "$T" /tmp/preempt-keep; cleanup' EXIT
wait_for 10 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; }

# stream NAME: a long streamed answer, each line stamped with its arrival.
# The requests' time limits are for a hang (meson's timeout would do), not
# a measure: what is measured is stamped and checked apart, and a loaded
# machine stretches the turns and swaps well past their sum on an idle one
stream() {
    curl -sN -m 170 "$P/v1/chat/completions" -d "{\"model\":\"$1\",\"stream\":true,\"messages\":[]}" |
        while IFS= read -r line; do [ -n "$line" ] && echo "$(date +%s.%N) $line"; done >"$T/$1.stream"
}

# 1. two long answers at once: they take turns, both whole and right
"$VRAM" load x >/dev/null
stream x &
SX=$!
wait_for 30 grep -q chunk "$T/x.stream" 2>/dev/null
stream y &
SY=$!
# a short request to x while they take turns: once y has had the GPU
wait_for 30 grep -q chunk "$T/y.stream"
curl -s -m 170 -w '%{time_starttransfer}' "$P/v1/chat/completions" \
    -d '{"model":"x","stream":true,"messages":[]}' -o "$T/short" >"$T/short.ttfb" &
SHORT=$!
wait $SX $SY
wait $SHORT
for m in x y; do
    expect_eq "$m's stream arrives whole (40 chunks, then [DONE])" \
        "$(grep -c '"chunk"' "$T/$m.stream") $(grep -c DONE "$T/$m.stream")" "40 1"
    expect_eq "$m's chunks in order" "$(grep -o '"chunk":[0-9]*' "$T/$m.stream" | cut -d: -f2 | tr '\n' ' ')" \
        "$(seq 0 39 | tr '\n' ' ')"
    expect_eq "every token $m read through the GPU was right" "$(grep -c '"ok":false' "$T/$m.stream")" 0
done
# turns: both streams paused while the other ran (a gap of over a slice
# between two chunks), and each ran while the other was paused
gaps() { awk '{t = $1; if (p && t - p > 1.5) n++; p = t} END {print n + 0}' "$T/$1.stream"; }
expect_eq "x was paused mid-stream, for y ($(gaps x) pauses)" "$([ "$(gaps x)" -ge 1 ] && echo yes)" yes
expect_eq "y was paused mid-stream, for x ($(gaps y) pauses)" "$([ "$(gaps y)" -ge 1 ] && echo yes)" yes
expect_eq "both took turns: each was preempted" \
    "$([ "$(state x preemptions)" -ge 1 ] && [ "$(state y preemptions)" -ge 1 ] && echo yes)" yes
expect_match "the log says why and what it held" "$(cat "$T/serve.log")" 'x: preempted: GPU 0, [0-9]+ requests? held'
expect_match "the proxy's log line says how long a request was held" "$(cat "$T/serve.log")" \
    'proxy [xy] /v1/chat/completions 200 .*held [0-9.]+ ms'
expect_match "/metrics counts preemptions" "$(curl -s --unix-socket "$T/vram.sock" http://x/metrics)" \
    'vram_model_preemptions_total\{model="x"\} [1-9]'
expect_match "the short request was answered" "$(cat "$T/short")" 'DONE'
# x is running, or out for at most y's slice (2 s) and a swap: well under
# the 20 s of y's whole answer it would wait for without time slices (the
# bound leaves room for a loaded CI machine; bench/gpu_preempt.sh measures)
expect_eq "its first token came within a slice and a swap ($(cat "$T/short.ttfb") s)" \
    "$(awk -v t="$(cat "$T/short.ttfb")" 'BEGIN { print (t < 10) ? "yes" : "no" }')" yes

# 2. pinned, and preempt = no: never suspended mid-answer; the other waits
#    (for good with a pinned model, which is never evicted; for the whole
#    answer with preempt = no)
for m in pin nope; do
    "$VRAM" load $m >/dev/null
    stream $m &
    S1=$!
    wait_for 30 grep -q chunk "$T/$m.stream" 2>/dev/null
    # the other asks meanwhile: after a pinned model's answer it still gets
    # nothing (12 s: its answer's 5 s, and more); after preempt = no's, it
    # is answered, however long a loaded machine takes to start it
    LIMIT=12
    [ $m = nope ] && LIMIT=120
    curl -sN -m $LIMIT "$P/v1/chat/completions" -d '{"model":"other","stream":true,"messages":[]}' |
        while IFS= read -r line; do [ -n "$line" ] && echo "$(date +%s.%N) $line"; done >"$T/other.$m"
    wait $S1
    expect_eq "$m: its answer never paused" "$(gaps $m)" 0
    expect_eq "$m: no preemption" "$(state $m preemptions)" 0
    LAST=$(grep chunk "$T/$m.stream" | tail -1 | cut -d' ' -f1)
    OTHER=$(grep chunk "$T/other.$m" | head -1 | cut -d' ' -f1)
    case $m in
    pin) expect_eq "pin: the other got no token while it answered" "$OTHER" "" ;;
    nope) expect_eq "preempt = no: the other's first token came after its last" \
        "$(awk -v a="$LAST" -v b="${OTHER:-0}" 'BEGIN { print (b > a) ? "yes" : "no" }')" yes ;;
    esac
    "$VRAM" unload $m >/dev/null
    "$VRAM" unload other >/dev/null
done

kill -TERM "$DAEMON"
wait_for 15 sh -c "! kill -0 $DAEMON 2>/dev/null"
finish
