#!/bin/bash
# The three tiers (issue 41): GPU, host memory within host_budget, and a
# spill file on disk below it. Three models of 256 MiB suspended in turn
# where host_budget holds two: two go to host memory by fast swap, the
# third's bytes to disk; host memory held stays within the budget; no
# process is stopped; all three come back intact; the file is 0600, the
# model's, and gone after the resume. Then, on a GPU that holds one model
# at a time and host memory that holds one: requests alternate with
# keep_alive 0 and every switch is a suspend (before, a model resumed while
# the other was held in host memory was stopped, with no word of why);
# the least recently used moves down to disk ahead of the next suspend; a
# model that grew since its last suspend still suspends, the growth going
# to disk; and with no disk tier, a model that must be stopped says why.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
daemon_env 37 600
conf() { # conf HOST_BUDGET GPU_BUDGET [SPILL]
    { serve_head; printf 'listen = 127.0.0.1:%s\nhost_budget = %s\nbudget = 0:%s\n' "$LISTEN" "$1" "$2"
      [ -n "${3:-}" ] && printf 'spill = %s\n' "$3"
      for m in a b c; do
          printf '\n[model %s]\ncommand = %s --bytes 256M --grow 512M --openai %s\nvram = 300M\ngpu = 0\n' \
              $m "$TESTMODEL" $m
      done; } >"$T/vram.conf"
}
json() { "$VRAM" ps --json; }
field() { json | jq -r --arg m "$1" ".models[] | select(.name == \$m) | .$2"; }
is() { [ "$(field "$1" state)" = "$2" ]; }
start_daemon() {
    rm -f "$T/vram.sock"
    "$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
    DAEMON=$!
    JOBS="$JOBS $DAEMON"
    wait_for 10 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; }
}
stop_daemon() { kill -TERM $DAEMON; wait $DAEMON 2>/dev/null; }
# Ollama's chat with keep_alive 0: answered, then evicted at once (an
# empty messages list would be an unload)
chat() { curl -s -m 60 "$P/api/chat" -d "{\"model\":\"$1\",\"keep_alive\":0,\"stream\":false,
    \"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"; }
intact() { curl -s -m 30 "$P/v1/chat/completions" -d "{\"model\":\"$1\",\"messages\":[]}" |
    grep -q "$1: memory intact"; }
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.3; cleanup' EXIT

# 1. host_budget for two of three: the third's bytes go to disk
conf 600M 2G
start_daemon
for m in a b c; do "$VRAM" load $m >/dev/null; done
declare -A PID
for m in a b c; do PID[$m]=$(field $m pid); done
for m in a b c; do "$VRAM" suspend $m >/dev/null; done
HELD=$(json | jq '.host_pool.held_bytes + .host_pool.charged_bytes')
expect_eq "three suspended where host_budget holds two: host memory held stays within it ($HELD)" \
    "$([ "$HELD" -le $((600 * MiB)) ] && echo yes)" yes
expect_eq "... all three by fast swap, none by the driver's checkpoint (host memory outside the budget)" \
    "$(json | jq -r '[.models[].suspended_by] | unique | join(",")')" fast
DISK=$(json | jq '[.models[].disk_bytes] | add')
expect_eq "... what host memory could not hold is on disk ($DISK bytes)" \
    "$([ "$DISK" -ge $((128 * MiB)) ] && echo yes)" yes
expect_eq "... and that model's tier says so" \
    "$(json | jq -r '[.models[] | select(.disk_bytes > 0) | .tier] | unique | join(",")' | grep -Ec '^(disk|host\+disk)$')" 1
expect_match "... vram ps shows it" "$("$VRAM" ps)" 'suspended .* (disk|host\+disk) +[0-9.]+ MiB'
ON=$(json | jq -r '.models[] | select(.disk_bytes > 0) | .name' | head -1)
F=$(ls "$T"/spill/*.spill 2>/dev/null)
# host memory had room for part of the third: that part stays there, the
# rest goes to disk, and each byte is counted once (the file's blocks
# reserved from its start counted its host memory's part as on disk too,
# filling spill_budget with nothing: suspends refused, models stopped)
HOSTPART=$(field "$ON" host_pool_bytes)
expect_eq "... host memory holds part of it ($HOSTPART bytes), so its tier is host+disk" \
    "$([ "$HOSTPART" -gt 0 ] && field "$ON" tier)" host+disk
expect_eq "... its bytes in host memory and on disk add up to it, not more" \
    "$(json | jq --arg m "$ON" '.models[] | select(.name == $m) | .host_bytes + .disk_bytes <= 256 * 1048576 + 1048576')" true
expect_eq "... its spill file takes on disk what went there, not the whole model" \
    "$(( $(stat -c '%b * %B' "$F") <= $(field "$ON" disk_bytes) + 1048576 )) $(( $(stat -c '%b * %B' "$F") < 256 * MiB ))" "1 1"
expect_eq "one spill file, in the spill folder beside the state" "$(echo "$F" | grep -c spill)" 1
expect_eq "... mode 0600" "$(stat -c %a "$F")" 600
expect_eq "... owned by the model's user" "$(stat -c %u "$F")" "$(stat -c %u /proc/"${PID[$ON]}")"
expect_eq "... the folder is private" "$(stat -c %a "$T/spill")" 700
expect_match "/metrics counts the disk tier" "$(curl -s --unix-socket "$T/vram.sock" http://x/metrics)" \
    "vram_model_disk_bytes\{model=\"$ON\"\} [1-9][0-9]*"
for m in a b c; do
    expect_eq "$m comes back intact" "$(intact $m && echo yes)" yes
done
wait_for 10 bash -c "! ls '$T'/spill/*.spill >/dev/null 2>&1"
expect_eq "... the spill file is gone once its model resumed" "$(ls "$T"/spill/ | wc -l)" 0
same=yes
for m in a b c; do [ "$(field $m pid)" = "${PID[$m]}" ] || same=no; done
expect_eq "... no process was stopped or restarted" "$same" yes
stop_daemon

# 2. a GPU that holds one model, host memory that holds one, keep_alive 0
conf 600M 700M
start_daemon
curl -sN -m 300 --unix-socket "$T/vram.sock" http://x/v1/events >"$T/events" 2>/dev/null &
JOBS="$JOBS $!"
wait_for 5 grep -q '^: vram serve events' "$T/events"
bad=0
for i in 1 2 3 4 5 6; do
    for m in a b c; do
        OUT=$(chat $m)
        echo "$OUT" | grep -q "$m: memory intact" || bad=$((bad + 1))
    done
done
expect_eq "keep_alive 0, requests alternating over three models: every answer intact" "$bad" 0
settled() { ! json | jq -e '.models[] | select(.state | test("ing$"))' >/dev/null; }
wait_for 60 settled
expect_eq "... every switch a suspend: no model stopped" \
    "$(grep -c '"event":"stopping"' "$T/events")" 0
expect_eq "... started once each" "$(grep -c '"event":"starting"' "$T/events")" 3
expect_match "... the least recently used moved down to disk ahead of the next suspend" \
    "$(cat "$T/serve.log")" ': moved to disk: [0-9.]+ MiB'
expect_match "... said in the event stream" "$(cat "$T/events")" '"event":"moved to disk"'
stop_daemon

# 2b. a model that grew after its last suspend (as PyTorch's cache does
# after a first generation: 7 GiB at load, 10 GiB after, on the H100's
# LLM trace) still suspends, what host memory cannot hold going to disk:
# its spill file was sized from its last suspend, and the suspend failed
# ("hold less than the ... to move"), the model stopped and cold-started
conf 300M 2G
start_daemon
"$VRAM" load a >/dev/null
"$VRAM" suspend a >/dev/null
"$VRAM" load a >/dev/null
APID=$(field a pid)
expect_match "a model grows by 512 MiB" "$(curl -s -m 30 "$P/m/a/grow")" '"grown":536870912'
# the daemon's own snapshot has seen it
seen() { curl -s --unix-socket "$T/vram.sock" http://x/v1/snapshot |
    jq -e ".gpus[].processes[] | select(.pid == $APID) | .used >= $((768 * MiB))" >/dev/null; }
wait_for 20 seen || not_ok "the daemon sees the model grown" "$(curl -s --unix-socket "$T/vram.sock" http://x/v1/snapshot)"
OUT=$("$VRAM" suspend a 2>&1)
RC=$?
expect_eq "... and suspends again, host memory holding what it had, the rest on disk" \
    "$RC $(field a state)" "0 suspended" "$OUT"
expect_eq "... its tier: host+disk" "$(field a tier)" host+disk
expect_eq "... back intact, the same process" "$(intact a && echo yes) $(field a pid)" "yes $APID"
stop_daemon

# 3. no disk tier, host memory for one: a model that must be stopped says why
conf 300M 700M no
start_daemon
for m in a b c; do chat $m >/dev/null; done
wait_for 60 settled
expect_match "spill = no, host memory full: the model stopped says why" "$(cat "$T/serve.log")" \
    'stopping: .*no room to suspend it: .* held by suspended models'
expect_eq "... and no disk tier was opened" "$(grep -c 'disk tier' "$T/serve.log")" 0
stop_daemon
finish
