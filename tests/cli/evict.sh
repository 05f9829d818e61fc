#!/bin/sh
# Why a model went out (issue 44, item 10), as data: a model evicted for
# another says for which, which request asked for it, what it needed and
# what was free, and why this one (idle, least recently used of the lowest
# priority, of how many): in the log line, in the event's "reason", in vram
# ps --json's "evicted"; a model unloaded as asked has none. And a second
# vram serve on the same configuration says another daemon answers there
# before it touches anything of the first's (it adopted each model before).
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-evict"
TESTMODEL="$T/testmodel-evict"
daemon_env 41 600
{
    serve_head
    printf 'listen = 127.0.0.1:%s\nbudget = 0:3G\n' "$LISTEN"
    for m in a b; do
        printf '\n[model %s]\ncommand = %s --bytes 1G\nvram = 2G\ngpu = 0\nswap = driver\nkeep_alive = forever\n' \
            "$m" "$TESTMODEL"
    done
    printf '\n[model c]\ncommand = %s --bytes 256M\nvram = 512M\ngpu = 1\nkeep_alive = 1s\n' "$TESTMODEL"
} >"$T/vram.conf"
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null; pkill -9 -f "$TESTMODEL" 2>/dev/null; cleanup' EXIT
wait_for 20 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
curl -s -N -m 60 --unix-socket "$T/vram.sock" http://x/v1/events >"$T/events" 2>/dev/null &
JOBS="$JOBS $!"
wait_for 3 grep -q '^: vram serve events' "$T/events"
evicted() { "$VRAM" ps --json | jq -c ".models[] | select(.name == \"$1\") | .evicted"; }
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .state"; }

"$VRAM" load a >/dev/null
expect_eq "a model that never went out: evicted null" "$(evicted a)" null
curl -s -m 60 "$P/v1/chat/completions" -d '{"model":"b","messages":[]}' >/dev/null
wait_for 10 sh -c "[ \"\$('$VRAM' ps --json | jq -r '.models[] | select(.name == \"a\") | .state')\" = suspended ]"
E=$(evicted a)
expect_eq "vram ps --json: a went out for b, for memory, asked by the proxied request" \
    "$(echo "$E" | jq -c '[.why, .for, .request, .gpu, .needed_bytes, .free_bytes, .candidates, .stopped]')" \
    "[\"room\",\"b\",\"POST /v1/chat/completions\",0,$((2 * GiB)),$GiB,1,false]"
expect_match "... with the words people read" "$(echo "$E" | jq -r .text)" \
    "^for b, asked by POST /v1/chat/completions: it needs 2.00 GiB on GPU 0, 1.00 GiB was free; this one was idle, the least recently used of the lowest priority \(5, last used [0-9]+ s before\) of 1 that could go$"
wait_for 5 grep -q "a: suspending: GPU 0; for b" "$T/serve.log"
expect_match "the log says why, on the suspending line" "$(cat "$T/serve.log")" \
    "a: suspending: GPU 0; for b, asked by POST /v1/chat/completions: it needs 2.00 GiB"
wait_for 5 grep -q '"event":"suspending"' "$T/events"
expect_eq "the event carries the reason as data" \
    "$(grep '"event":"suspending"' "$T/events" | head -1 | sed 's/^data: //' | jq -c '[.model, .reason.why, .reason.for, .reason.request]')" \
    '["a","room","b","POST /v1/chat/completions"]'

"$VRAM" load a >/dev/null
wait_for 10 sh -c "[ \"\$('$VRAM' ps --json | jq -r '.models[] | select(.name == \"b\") | .state')\" = suspended ]"
expect_eq "b went out for a, asked by vram load" "$(evicted b | jq -c '[.why, .for, .request]')" '["room","a","vram load"]'
"$VRAM" unload a >/dev/null
wait_for 10 sh -c "[ \"\$('$VRAM' ps --json | jq -r '.models[] | select(.name == \"a\") | .state')\" = stopped ]"
expect_eq "a model unloaded as asked: no eviction said" "$(evicted a)" null

"$VRAM" load c >/dev/null
wait_for 10 sh -c "[ \"\$('$VRAM' ps --json | jq -r '.models[] | select(.name == \"c\") | .state')\" = suspended ]"
expect_eq "c went out unused for its keep_alive (1s)" "$(evicted c | jq -c '[.why, .for]')" '["keep_alive",null]'
# fast swap leaves the process's CUDA context on the GPU (300 MiB on this
# simulated card): vram ps says so, not 0
wait_for 5 sh -c "'$VRAM' ps --json | jq -e '.models[] | select(.name == \"c\") | .vram_bytes > 0' >/dev/null"
expect_eq "a suspended model's context still on the GPU: its VRAM and GPU, as the driver says" \
    "$("$VRAM" ps --json | jq -c '.models[] | select(.name == "c") | [.state, .gpu, .vram_bytes, .suspended_by]')" \
    "[\"suspended\",1,$((300 * MiB)),\"fast\"]"
expect_match "... in vram ps's table too" "$("$VRAM" ps | grep '^c ')" '^c +suspended +1 +300.0 MiB'

# a second daemon on the same configuration
B_PID=$("$VRAM" ps --json | jq -r '.models[] | select(.name == "b") | .pid')
"$VRAM" serve --config "$T/vram.conf" >"$T/second.log" 2>&1
RC=$?
expect_eq "a second vram serve on the same configuration: exit 1" "$RC" 1
expect_match "... says another daemon answers there" "$(cat "$T/second.log")" "another vram serve answers there already"
expect_eq "... and adopted nothing of the first's before" "$(grep -c 'adopted' "$T/second.log")" 0
expect_eq "the first's models are as they were" "$(state b) $("$VRAM" ps --json | jq -r '.models[] | select(.name == "b") | .pid')" \
    "suspended $B_PID"
finish
