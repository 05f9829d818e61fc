#!/bin/sh
# vram serve end to end against the simulated driver: two 16 GiB GPUs, six
# test models (tests/helpers/testmodel: device memory with a known pattern,
# /health, /checksum) worth twice GPU 0, a scripted sequence of demands.
# Asserts: the eviction order (priority, then least recent use), memory
# intact after suspend/resume (also onto the other GPU), no GPU ever over
# its budget, a killed model restarted, a SIGKILLed daemon that comes back
# adopting its models (none lost, none doubled), no demand lost, a command
# that does not exist reported as failed, bad requests and a broken reload.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
# a copy of our own, so that counting and killing model processes by name
# never touches another test's (the CLI tests run in parallel)
cp "$TESTMODEL" "$T/testmodel-serve"
TESTMODEL="$T/testmodel-serve"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + $$ % 20000))

# model NAME ARGS VRAM [LINE]: a test model on GPU 0, evictable at once.
# Simulated GPU memory is sparse host memory, so a 5 GiB model costs this
# machine little until fast swap copies every byte of it: these models use
# the driver's checkpoint (tests/cli/swap.sh covers fast swap in the daemon)
model() {
    printf '\n[model %s]\ncommand = %s %s\nvram = %s\ngpu = 0\nswap = driver\n' "$1" "$TESTMODEL" "$2" "$3"
    [ -z "${4:-}" ] || printf '%s\n' "$4"
}
conf() {
    cat <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 15G
host_budget = 64G
port_base = $PORTS
min_resident = 0
CONF
    model a "--bytes 5G" 5.5G
    model b "--bytes 5G" 5.5G "priority = 1"
    model c "--bytes 5G" 5.5G
    model d "--bytes 5G --startup 0.5" 5.5G
    model e "--bytes 9G" 9.5G
    printf '\n[model broken]\ncommand = /nonexistent/model-server --port ${PORT}\nvram = 1G\n'
}
conf >"$T/vram.conf"

run() { OUT=$("$@" 2>&1); RC=$?; }
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
checksum() { curl -s -m 20 "http://127.0.0.1:$(state "$1" port)/checksum" | jq -r .intact; }
start_daemon() {
    "$VRAM" serve --config "$T/vram.conf" >>"$T/serve.log" 2>&1 &
    DAEMON=$!
    JOBS="$JOBS $DAEMON"
    for _ in $(seq 1 100); do
        [ -S "$T/vram.sock" ] && "$VRAM" ps >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    cat "$T/serve.log"
    return 1
}
cleanup_models() { pkill -9 -f "$TESTMODEL" 2>/dev/null; }
trap "cleanup_models; [ -n \"${KEEP:-}\" ] && cp -r \"$T\" /tmp/serve-keep; cleanup" EXIT

conf | sed '/^\[model broken\]/,$d' >"$T/good.conf"
run "$VRAM" serve --check --config "$T/good.conf"
expect_eq "serve --check: a good configuration" "$RC" 0
run "$VRAM" serve --check --config "$T/vram.conf"
expect_match "serve --check: a model whose program is not there fails it (exit 1), named" "$RC $(echo "$OUT" | tr '\n' ' ')" \
    "^1 .*\[model broken\] /nonexistent/model-server: No such file or directory"
printf '[serve]\nsocket = %s/x.sock\n\n[model m]\ncommand = true\nvram = lots\n' "$T" >"$T/bad.conf"
run "$VRAM" serve --check --config "$T/bad.conf"
expect_eq "serve --check: a bad value, exit 2" "$RC" 2
expect_match "serve --check: names the file, the line and the fix" "$OUT" "bad.conf:6: vram 'lots': a size \(6G\) or auto"
printf '[serve]\nsocket = %s/x.sock\n\n[model m]\ncommand = echo %0250d\nvram = 1G\n' "$T" 0 >"$T/long.conf"
run "$VRAM" serve --check --config "$T/long.conf"
expect_eq "serve --check: a line too long for the INI reader, exit 2" "$RC" 2
expect_match "serve --check: says which line, and how to split it" "$OUT" \
    "long.conf:5: a line of 265 characters, more than the 198 .*indented"
# the capped model's command goes on over an indented line: its --bytes must
# arrive for it to go over its slice (below)
printf '\n[model capped]\ncommand = %s\n    --bytes 3G\nvram = 2G\ncap = yes\ngpu = 1\n' "$TESTMODEL" >>"$T/vram.conf"
start_daemon || { not_ok "the daemon starts"; finish; }

# never over budget: GPU 0's used memory, sampled all along
( while :; do "$VRAM" status --json | jq '.gpus[0].memory.used'; sleep 0.1; done ) >"$T/used0" 2>/dev/null &
JOBS="$JOBS $!"

run "$VRAM" load
expect_eq "load without a model: exit 2" "$RC" 2
expect_match "and it lists the daemon's models" "$OUT" "^vram load: which model\? a, b, c, d, e, broken, capped \(vram ps"
run "$VRAM" load a
expect_match "load a: ready on GPU 0" "$OUT" "^a: ready on GPU 0, 5.50 GiB, port [0-9]+"
expect_eq "a's memory holds its pattern" "$(checksum a)" true
"$VRAM" load b >/dev/null
run "$VRAM" load c
expect_match "load c: ready, after making room" "$OUT" "^c: ready on GPU 0"
expect_eq "b (priority 1) was suspended to make room, a was not" \
    "$(state b state) $(state a state)" "suspended ready"
"$VRAM" load d >/dev/null
expect_eq "then a (used before c) was suspended for d" "$(state a state) $(state c state)" "suspended ready"
run "$VRAM" load b
expect_match "load b: resumed" "$OUT" "^b: ready on GPU 0"
expect_eq "b's memory is intact after suspend and resume" "$(checksum b)" true
expect_eq "c (least recent) made room for b" "$(state c state)" suspended
# seconds as people write them (0.516), not as a double prints in full
# (0.51600000000000001): 15 significant digits at most, in every JSON vram writes
expect_eq "ps --json: no real printed past its precision" \
    "$("$VRAM" ps --json | grep -cE '[0-9]\.[0-9]{12,}')" 0
expect_match "... while the seconds are there" "$("$VRAM" ps --json)" '"last_start_s": [0-9]+\.[0-9]+'
APID=$(state a pid)
run "$VRAM" resume a --gpu 1
expect_match "resume a --gpu 1" "$OUT" "^a: ready on GPU 1"
expect_eq "a's memory is intact after resuming on the other GPU" "$(checksum a)" true
expect_eq "a is the same process" "$(state a pid)" "$APID"
expect_match "vram status shows a's process on GPU 1" \
    "$("$VRAM" status --json | jq -c "[.gpus[1].processes[].pid]")" "$APID"
run "$VRAM" suspend d
expect_match "suspend d" "$OUT" "^d: suspended"
expect_eq "d's host RAM is reported" "$([ "$(state d host_bytes)" -gt 0 ] && echo yes)" yes

# the event stream and the metrics
# (read until the change comes, not for 3 s: a loaded machine may take
# that long to answer the stream's head)
curl -s -N -m 120 --unix-socket "$T/vram.sock" http://x/v1/events >"$T/events" 2>/dev/null &
EV=$!
JOBS="$JOBS $EV"
wait_for 30 grep -q '^: vram serve events' "$T/events"
"$VRAM" unload c >/dev/null
wait_for 30 grep -q '"model":"c","event":"stopping"' "$T/events"
kill $EV 2>/dev/null
wait $EV 2>/dev/null
expect_match "/v1/events streams the changes as they happen" "$(cat "$T/events")" \
    '^data: \{.*"model":"c","event":"stopping"'
M=$(curl -s -m 5 --unix-socket "$T/vram.sock" http://x/metrics)
expect_match "/metrics: model states" "$M" 'vram_model_state\{model="a",state="ready"\} 1'
expect_match "/metrics: GPU memory by part" "$M" 'vram_gpu_memory_bytes\{gpu="0",part="free"\} [0-9]+'
expect_match "/metrics: suspend counts" "$M" 'vram_model_transitions_total\{model="d",kind="suspend"\} 1'

# a killed model is started again
"$VRAM" load e >/dev/null
EPID=$(state e pid)
kill -9 "$EPID"
# state and pid from one look: two could see it ready, then its pid gone
restarted() {
    set -- $(state e 'state + " " + (.pid | tostring)')
    [ "${1:-}" = ready ] && [ "${2:-}" != "$EPID" ]
}
wait_for 10 restarted
expect_eq "e killed: restarted and ready" "$(state e state)" ready
expect_eq "e's restarts count it" "$(state e restarts)" 1

# many demands at once, for models that cannot all fit: none is lost
for m in a b c d e b a; do
    ( "$VRAM" load "$m" --timeout 60s >/dev/null 2>&1; echo "$m $?" >>"$T/loads" ) &
done
wait_loads() { for _ in $(seq 1 600); do [ "$(wc -l <"$T/loads" 2>/dev/null)" -ge 7 ] && return; sleep 0.1; done; }
wait_loads
expect_eq "7 concurrent loads: all answered" "$(wc -l <"$T/loads")" 7
expect_eq "7 concurrent loads: all succeeded" "$(grep -vc ' 0$' "$T/loads")" 0

# cap = yes: the model runs under libvramcap with its vram as its slice
run "$VRAM" load capped --timeout 60s
expect_match "cap = yes: a model over its slice cannot start (its command continued on an indented line)" \
    "$OUT" "failed 3 times.*cannot allocate"

# a command that does not exist: failed with its error, not retried forever
run "$VRAM" load broken --timeout 60s
expect_eq "broken model: load fails (exit 1)" "$RC" 1
expect_match "broken model: says why" "$OUT" "failed 3 times, last: exited with status 127 \(command not found\)"
expect_eq "broken model: state failed" "$(state broken state)" failed
RESTARTS=$(state broken restarts)
run "$VRAM" unload broken
expect_eq "broken model unloaded: stopped, to be tried again" "$(state broken state)" stopped
expect_eq "broken model unloaded: no restart counted" "$(state broken restarts)" "$RESTARTS"
expect_match "broken model unloaded: the log says stopped, not crashed" \
    "$(grep ' broken: ' "$T/serve.log" | tail -1)" "broken: stopped: its failure cleared"

# bad requests get 4xx and a message; the daemon goes on
api() { curl -s -m 20 -o "$T/api.out" -w '%{http_code}' --unix-socket "$T/vram.sock" "$@"; }
expect_eq "unknown model: 404" "$(api -X POST http://x/v1/models/nope/load)" 404
expect_match "unknown model: a message" "$(cat "$T/api.out")" "no model 'nope'"
expect_eq "malformed JSON: 400" "$(api -X POST -d '{"timeout": ' http://x/v1/models/a/load)" 400
expect_match "malformed JSON: where" "$(cat "$T/api.out")" "not a JSON object.*line 1"
head -c 200000 /dev/zero | tr '\0' 'x' >"$T/big"
expect_eq "oversized body: 413" "$(api -X POST --data-binary @"$T/big" http://x/v1/models/a/load)" 413
expect_eq "unknown action: 404" "$(api -X POST http://x/v1/models/a/explode)" 404
run "$VRAM" load nope
expect_eq "vram load nope: exit 2" "$RC" 2

# a broken configuration on reload: refused, the models go on
PIDS_BEFORE=$("$VRAM" ps --json | jq -c '[.models[].pid]')
printf '[serve]\nsocket = %s\n[model x\n' "$T/vram.sock" >"$T/vram.conf"
kill -HUP "$DAEMON"
wait_for 5 grep -q "reload refused" "$T/serve.log"
expect_match "broken reload: refused with the line" "$(cat "$T/serve.log")" "reload refused, the running configuration stays: .*vram.conf:3"
expect_eq "broken reload: the models run on" "$("$VRAM" ps --json | jq -c '[.models[].pid]')" "$PIDS_BEFORE"
# a good reload: a new model appears, a changed one is stopped (to start anew)
conf >"$T/vram.conf"
printf '\n[model f]\ncommand = %s --bytes 1G\nvram = 1.5G\n' "$TESTMODEL" >>"$T/vram.conf"
sed -i 's/^command = \(.*\) --bytes 9G$/command = \1 --bytes 8G/' "$T/vram.conf"
# and two settings a reload cannot apply (read once, at the start), and one
# that a model takes at its next start
sed -i 's/^host_budget = 64G$/host_budget = 63G\nclient_timeout = 30s/' "$T/vram.conf"
sed -i 's/^swap = driver$/swap = driver\nstart_timeout = 3m/' "$T/vram.conf"
kill -HUP "$DAEMON"
wait_for 5 grep -q "configuration reloaded" "$T/serve.log"
expect_match "reload: the settings that wait for a restart are named, not dropped silently" \
    "$(cat "$T/serve.log")" \
    "client_timeout, host_budget changed in $T/vram.conf: a reload cannot apply them.*restarts"
expect_match "reload: a model that runs is told to take start_timeout at its next start" \
    "$(cat "$T/serve.log")" "model [a-d]: start_timeout changed: at its next start"
expect_eq "reload: the new model is there" "$(state f state)" stopped
expect_eq "reload: the changed model was stopped" "$(state e state)" stopped
run "$VRAM" load f
expect_match "reload: the new model loads" "$OUT" "^f: ready"

# the daemon dies (SIGKILL) and comes back: it adopts what runs
BEFORE=$("$VRAM" ps --json | jq -c '[.models[] | select(.pid) | [.name, .state, .pid]] | sort')
NPROC=$(pgrep -fc "$TESTMODEL")
kill -9 "$DAEMON"
wait_for 5 sh -c "! kill -0 $DAEMON 2>/dev/null"
start_daemon
AFTER=$("$VRAM" ps --json | jq -c '[.models[] | select(.pid) | [.name, .state, .pid]] | sort')
expect_eq "after a SIGKILL, the new daemon adopts every model as it was" "$AFTER" "$BEFORE"
expect_eq "no model process lost or doubled" "$(pgrep -fc "$TESTMODEL")" "$NPROC"
SUSP=$("$VRAM" ps --json | jq -r '[.models[] | select(.state == "suspended") | .name][0]')
run "$VRAM" load "$SUSP"
expect_match "an adopted suspended model ($SUSP) resumes" "$OUT" "^$SUSP: ready"
expect_eq "its memory is intact" "$(checksum "$SUSP")" true

# capacity: GPU 0 never held more than its budget, the driver's reserve and the notebook
MAX=$(sort -n "$T/used0" | tail -1)
LIMIT=$((15 * GiB + 1 * GiB))
expect_eq "GPU 0 never over its budget ($MAX <= $LIMIT)" "$([ "$MAX" -le "$LIMIT" ] && echo yes)" yes
expect_eq "no out-of-memory anywhere (but the capped model's)" \
    "$(ls "$T"/logs/*.log | grep -v capped.log | xargs grep -c 'OUT_OF_MEMORY\|cannot allocate' | awk -F: '{s+=$2} END {print s}')" 0

# SIGTERM: the models are stopped, the daemon exits
kill -TERM "$DAEMON"
wait_for 10 sh -c "! kill -0 $DAEMON 2>/dev/null"
expect_eq "SIGTERM: the daemon exits" "$(kill -0 "$DAEMON" 2>/dev/null || echo gone)" gone
wait_for 5 sh -c "! pgrep -f '$TESTMODEL' >/dev/null"
expect_eq "SIGTERM: no model process left" "$(pgrep -fc "$TESTMODEL")" 0
pgrep -fa "$TESTMODEL" | sed 's/^/#   left: /'

finish
