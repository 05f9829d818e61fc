#!/bin/sh
# The settings people bring from Ollama and llama-swap, in vram serve:
# [serve] keep_alive (the models' default), max_loaded (in all, per GPU),
# max_queue, with OLLAMA_KEEP_ALIVE, OLLAMA_MAX_LOADED_MODELS and
# OLLAMA_MAX_QUEUE honoured where the file is silent (the file wins);
# preload (started with the daemon); health = none (a server without a
# health route is ready once its port takes a connection); stop = (a
# command that stops the model, ${PID} filled in; one that fails or hangs
# falls back to signals). Against the simulated driver with test models.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-knobs"
TESTMODEL="$T/testmodel-knobs"
daemon_env 29 900
unset OLLAMA_KEEP_ALIVE OLLAMA_MAX_LOADED_MODELS OLLAMA_MAX_QUEUE

# --check and what it says of the file and the environment
base() {
    printf '[serve]\nsocket = %s/vram.sock\nstate = %s/vram.db\nlogs = %s/logs\nport_base = %s\nlisten = 127.0.0.1:%s\n%s\n' \
        "$T" "$T" "$T" "$PORTS" "$LISTEN" "$1"
}
model() { # NAME GPU [MORE [ARGS]]
    printf '\n[model %s]\ncommand = %s %s\nvram = 2G\ngpu = %s\nswap = driver\n%s\n' \
        "$1" "$TESTMODEL" "${4:---bytes 1G --chunks 2 --chunk-ms 10}" "$2" "${3:-}"
}
{ base 'keep_alive = 10m'; model a 0; model b 0 'keep_alive = 1m'; } >"$T/check.conf"
OUT=$("$VRAM" serve --check --config "$T/check.conf" 2>&1)
expect_match "--check: keep_alive in [serve] is read" "$OUT" "2 models"
OUT=$(OLLAMA_KEEP_ALIVE=24h OLLAMA_MAX_QUEUE=7 "$VRAM" serve --check --config "$T/check.conf" 2>&1)
expect_match "--check: names the variables it used, not those the file overrides" "$OUT" \
    "from the environment: OLLAMA_MAX_QUEUE=7\$"
OUT=$(OLLAMA_KEEP_ALIVE=soon "$VRAM" serve --check --config "$T/check.conf" 2>&1)
expect_eq "--check: OLLAMA_KEEP_ALIVE=soon is no keep-alive, but keep_alive = wins: no error" "$?" 0
{ base ''; model a 0; } >"$T/env.conf"
OUT=$(OLLAMA_KEEP_ALIVE=soon "$VRAM" serve --check --config "$T/env.conf" 2>&1)
expect_match "--check: OLLAMA_KEEP_ALIVE=soon where the file is silent: refused, named" "$OUT" \
    "OLLAMA_KEEP_ALIVE='soon' \(from the environment\): a duration"
bad() { { base "$1"; model a 0; } >"$T/bad.conf"; "$VRAM" serve --check --config "$T/bad.conf" 2>&1; }
# GPU indexes that are not there: named, with the GPUs there are (a model
# of vram = auto too, as vram import writes them)
"$MKMODEL" gguf "$T/m.gguf" 0.05
gpus() { { base ''; printf '\n[model g]\ncommand = %s\n%s\n' "$TESTMODEL" "$1"; } >"$T/gpus.conf"
    "$VRAM" serve --check --config "$T/gpus.conf" 2>&1; echo "exit $?"; }
GPUS_THERE='GPU 0 \(NVIDIA RTX A4000-16\), GPU 1 \(NVIDIA RTX A4000-16\)'
expect_match "gpu = 5 on two GPUs: no GPU 5, the two named, exit 2" "$(gpus "$(printf 'vram = 1G\ngpu = 5')" | tr '\n' ' ')" \
    "gpus.conf:12: \[model g\] gpu = 5: there is no GPU 5 on this machine; it has $GPUS_THERE: name one of those, or leave gpu out .*exit 2"
expect_match "gpus = 3 on two GPUs: it would span 3, there are 2" "$(gpus "$(printf 'vram = 256M\ngpus = 3')")" \
    "gpus.conf:12: \[model g\] gpus = 3: it would span 3 GPUs at once, and this machine has 2: $GPUS_THERE; gpus = 2 at most"
expect_match "gpus = 0,4: GPU 4 named" "$(gpus "$(printf 'vram = 1G\ngpus = 0,4')")" "gpus = 0,4: there is no GPU 4 on this machine"
expect_match "vram = auto with gpu = 5: refused the same" "$(gpus "$(printf 'vram = auto\nfile = %s\ngpu = 5' "$T/m.gguf")" | tr '\n' ' ')" \
    "gpus.conf:13: \[model g\] gpu = 5: there is no GPU 5 .*exit 2"
expect_match "max_loaded = lots: refused with its line" "$(bad 'max_loaded = lots')" \
    "bad.conf:7: max_loaded 'lots': models loaded at once in all"
expect_match "max_queue = 0: refused" "$(bad 'max_queue = 0')" "bad.conf:7: max_queue '0'"
expect_match "preload = a model nobody configured: refused" "$(bad 'preload = nope')" \
    "bad.conf:7: preload: no model 'nope'"
expect_match "health = none is taken; health = other is refused" \
    "$({ base ''; model a 0 'health = other'; } >"$T/bad.conf"; "$VRAM" serve --check --config "$T/bad.conf" 2>&1)" \
    "health 'other': a path .*, or none"

# the daemon: keep_alive 10m by default, max_loaded = 1 per gpu with room
# for more, p preloaded, a server without /health, models with stop =
PY_SERVER="python3 -m http.server \${PORT} --bind 127.0.0.1"
{
    base 'keep_alive = 10m
max_loaded = 1 per gpu
max_queue = 2
preload = p'
    model a 0
    model b 0 'keep_alive = 1m'
    model p 1
    model slow 1 "" "--bytes 1G --startup 3"
    printf '\n[model nohealth]\ncommand = %s\nvram = 1G\ngpu = 1\nevict = stop\nhealth = none\nstart_timeout = 10s\n' "$PY_SERVER"
    printf '\n[model stopped]\ncommand = %s --bytes 1G\nvram = 1G\ngpu = 1\nswap = driver\nstop = echo "stop ${PID}" >>%s/stops; kill -INT ${PID}\n' "$TESTMODEL" "$T"
    printf '\n[model stopfails]\ncommand = %s --bytes 1G\nvram = 1G\ngpu = 1\nswap = driver\nstop = exit 3\n' "$TESTMODEL"
    printf '\n[model stophangs]\ncommand = %s --bytes 1G\nvram = 1G\ngpu = 1\nswap = driver\nstop = sleep 29.%s\nstop_timeout = 500ms\n' "$TESTMODEL" "$$"
} >"$T/vram.conf"
OLLAMA_KEEP_ALIVE=2h OLLAMA_MAX_LOADED_MODELS=9 "$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.5; pkill -9 -f "$TESTMODEL" 2>/dev/null; cleanup' EXIT
up() { curl -s -m 1 -o /dev/null "$P/v1/models"; }
wait_for 5 up || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }

preloaded() { [ "$(state p state)" = ready ]; }
wait_for 20 preloaded && ok "preload = p: ready with no request" || not_ok "preload = p: ready" "$("$VRAM" ps)"
wait_for 5 grep -q "p: preloaded" "$T/serve.log"
expect_match "... and the log says so" "$(cat "$T/serve.log")" "p: preloaded"
expect_eq "keep_alive in [serve]: a model's default (the file over OLLAMA_KEEP_ALIVE=2h)" "$(state a keep_alive_ms)" 600000
expect_eq "... a model's own keep_alive wins" "$(state b keep_alive_ms)" 60000

# max_loaded = 1 per gpu: GPU 0 has room for both, yet one is loaded at a time
"$VRAM" load a >/dev/null
OUT=$("$VRAM" load b 2>&1)
expect_match "max_loaded = 1 per gpu: b loads" "$OUT" "^b: ready on GPU 0"
expect_eq "... and a, with room to stay, gave its place (suspended)" "$(state a state)" suspended
expect_eq "... the file's max_loaded over OLLAMA_MAX_LOADED_MODELS=9: p on GPU 1 stays" "$(state p state)" ready

# a suspended model in Ollama's /api/ps: out of VRAM since it left, the same on every call
ps_a() { curl -s -m 5 "$P/api/ps" | jq -c '.models[] | select(.name == "a") | [.size_vram, .expires_at]'; }
PS1=$(ps_a)
curl -s -m 5 -o /dev/null "$P/api/tags"
expect_eq "/api/ps: a suspended model's expires_at is the same on every call" "$(ps_a)" "$PS1"
AGO=$(curl -s -m 5 "$P/api/ps" | jq -r '.models[] | select(.name == "a") | .expires_at | sub("\\.[0-9]+"; "") | now - fromdateiso8601 | floor')
expect_eq "... when it left the GPU (its keep-alive over, as Ollama shows one), 0 in VRAM" \
    "$(echo "$PS1" | jq -r '.[0]') $((AGO >= 0 && AGO < 60))" "0 1"

# max_queue = 2: three requests wait for a slow start, the third is refused at once
code() { curl -s -m 30 -o "$1" -w '%{http_code}' "$P/v1/chat/completions" -d '{"model":"slow","stream":true,"messages":[]}'; }
code "$T/q1" >"$T/c1" &
W1=$!
code "$T/q2" >"$T/c2" &
W2=$!
queued() { curl -s -m 5 --unix-socket "$T/vram.sock" http://x/metrics | grep -q '^vram_queue_length 2$'; }
wait_for 5 queued || not_ok "two requests wait for slow's start" "$(cat "$T/serve.log")"
expect_eq "max_queue = 2: a third request while two wait: 503" "$(code "$T/q3")" 503
expect_match "... saying why" "$(cat "$T/q3")" "too many requests waiting \(max_queue = 2\)"
wait $W1 $W2
expect_eq "... the two that waited are answered" "$(cat "$T/c1") $(cat "$T/c2")" "200 200"

# health = none: python's http.server answers 404 on /health, and is ready anyway
OUT=$("$VRAM" load nohealth --timeout 15s 2>&1)
expect_match "health = none: a server without /health is ready once its port accepts" "$OUT" "^nohealth: ready"
expect_eq "... and serves through the proxy" "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$P/m/nohealth/")" 200

# stop =: the model's own stop command, ${PID} filled in
"$VRAM" load stopped >/dev/null
PID=$(state stopped pid)
"$VRAM" unload stopped >/dev/null
gone() { [ "$(state stopped state)" = stopped ]; }
wait_for 10 gone && ok "stop = ...: the model is stopped" || not_ok "stop = ...: the model is stopped" "$("$VRAM" ps)"
expect_eq "... by its stop command, \${PID} its process" "$(cat "$T/stops" 2>/dev/null)" "stop $PID"
"$VRAM" load stopfails >/dev/null
"$VRAM" unload stopfails >/dev/null
gone() { [ "$(state stopfails state)" = stopped ]; }
wait_for 10 gone && ok "a stop command that fails: signals stop the model" || not_ok "a stop command that fails" "$("$VRAM" ps)"
# the log is written in blocks, flushed every tick: wait for the line
wait_for 5 grep -q "stopfails: its stop command failed" "$T/serve.log"
expect_match "... and the log says so" "$(cat "$T/serve.log")" "stopfails: its stop command failed \(status 3\): SIGTERM"
"$VRAM" load stophangs >/dev/null
"$VRAM" unload stophangs >/dev/null
gone() { [ "$(state stophangs state)" = stopped ]; }
wait_for 10 gone && ok "a stop command that hangs: after stop_timeout, signals" || not_ok "a stop command that hangs" "$("$VRAM" ps)"
wait_for 5 grep -q "stophangs: still running" "$T/serve.log"
expect_match "... and the log says so" "$(cat "$T/serve.log")" "stophangs: still running 0.5 s after its stop command: SIGTERM"
hung() { ! pgrep -f "^sleep 29\.$$\$" >/dev/null; }
wait_for 5 hung && ok "... the hung command is ended too" || not_ok "... the hung command is ended too" "$(pgrep -fa "sleep 29")"

[ "$FAIL" -eq 0 ] || { echo "# the daemon's log:"; sed 's/^/#   /' "$T/serve.log" | tail -40; }
finish
