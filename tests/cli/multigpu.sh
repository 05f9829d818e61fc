#!/bin/bash
# Models over several GPUs (issue 21) on the simulated 8-GPU server: a
# model over 2 GPUs and one over 4 are placed whole, each on GPUs with
# room; one that needs 4 GPUs where only 2 are free evicts on as many GPUs
# as it needs and is never placed half; a model's process holds memory on
# every GPU it was given (CUDA_VISIBLE_DEVICES names them all) and fast
# swap moves all of it out and back, every byte intact on every GPU. Peer
# access (issue 21) survives fast swap: a process whose GPUs reach each
# other's memory, by cuCtxEnablePeerAccess or by cuMemSetAccess, is moved
# by fast swap, not the driver's checkpoint, and its GPUs still reach each
# other after resume.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-multi"
TM="$T/testmodel-multi"
export VRAM_SIM="$SRV"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 19) % 20000))
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 1500M
host_budget = 8G
port_base = $PORTS
min_resident = 0
CONF
model() { printf '\n[model %s]\ncommand = %s --bytes 256M --all-gpus\nvram = 1G\n%s\n' "$1" "$TM" "$2" >>"$T/vram.conf"; }
model two "gpus = 2"
model quad "gpus = 4"
model quad2 "gpus = 4"
model pair "gpus = 6,7"
peermodel() { printf '\n[model %s]\ncommand = %s --bytes 64M --all-gpus %s\nvram = 1G\ngpus = 2\n' "$1" "$TM" "$2" >>"$T/vram.conf"; }
peermodel peered "--peer enable"
peermodel granted "--vmm --peer grant"

run() { OUT=$("$@" 2>&1); RC=$?; }
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
gpus() { "$VRAM" ps --json | jq -c ".models[] | select(.name == \"$1\") | .gpus"; }
checksum() { curl -s -m 20 "http://127.0.0.1:$(state "$1" port)/checksum" | jq -c '[.intact, .checked]'; }
peer() { curl -s -m 20 "http://127.0.0.1:$(state "$1" port)/peer" | jq -c .peer; }

# 0. the simulated driver keeps access as the real one does (what lets the
#    tests below fail): without peer access GPU 0 cannot touch GPU 1's
#    memory; cuCtxEnablePeerAccess opens cuMemAlloc memory but not VMM
#    memory, which only cuMemSetAccess opens. Then the same under
#    libvramcap's fast swap, where cuMemAlloc memory is VMM memory, without
#    the daemon: vram suspend PID takes the fast path and the peer copy
#    works after resume.
NDIRECT=0
DPORT=0
DPID=0
direct_start() {
    DPORT=$((PORTS + 100 + NDIRECT))
    NDIRECT=$((NDIRECT + 1))
    CUDA_VISIBLE_DEVICES=0,1 PORT=$DPORT "$TM" --bytes 8M --all-gpus "$@" >"$T/direct.log" 2>&1 &
    DPID=$!
    JOBS="$JOBS $DPID"
    wait_for 10 curl -sf -o /dev/null "http://127.0.0.1:$DPORT/health" || echo "# $(cat "$T/direct.log")"
}
direct_peer() { curl -s -m 10 "http://127.0.0.1:$DPORT/peer" | jq -c .peer; }
direct_stop() { kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
direct() { direct_start "$@"; direct_peer; direct_stop; }
expect_eq "sim: no peer access, no copy between GPUs" "$(direct)" false
expect_eq "sim: cuCtxEnablePeerAccess opens cuMemAlloc memory" "$(direct --peer enable)" true
expect_eq "sim: but not VMM memory" "$(direct --vmm --peer enable)" false
expect_eq "sim: cuMemSetAccess opens VMM memory" "$(direct --vmm --peer grant)" true

for how in "--peer enable" "--vmm --peer grant"; do
    # shellcheck disable=SC2086 # two words
    LD_PRELOAD="$SHIM" VRAM_SWAP=1 direct_start $how
    expect_eq "fast swap, $how: GPU 0 and 1 reach each other's memory" "$(direct_peer)" true
    run "$VRAM" suspend "$DPID"
    expect_match "fast swap, $how: vram suspend takes the fast path" "$OUT" "suspended pid $DPID \(fast path\)"
    run "$VRAM" resume "$DPID"
    expect_match "fast swap, $how: and resumes by it" "$OUT" "resumed pid $DPID on GPU [0-9]+ \(fast path\)"
    expect_eq "fast swap, $how: the peer copy works after resume" "$(direct_peer)" true
    expect_eq "fast swap, $how: every byte intact on both GPUs" \
        "$(curl -s -m 10 "http://127.0.0.1:$DPORT/checksum" | jq -c .intact)" true
    if [ "$how" = "--peer enable" ]; then
        curl -s -m 10 -o /dev/null "http://127.0.0.1:$DPORT/unpeer"
        expect_eq "fast swap: cuCtxDisablePeerAccess takes the access back" "$(direct_peer)" false
    fi
    direct_stop
done
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.3; pkill -9 -f "$TM" 2>/dev/null; cleanup' EXIT
wait_for 10 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; }

# 1. placed whole, on GPUs with room, each GPU counting its share
run "$VRAM" load two
expect_match "a model over 2 GPUs loads" "$OUT" "^two: ready"
expect_eq "it is on 2 GPUs" "$(gpus two | jq length)" 2
"$VRAM" load quad >/dev/null
expect_eq "a model over 4 GPUs is on 4" "$(gpus quad | jq length)" 4
expect_eq "none shared: each GPU holds one model's share" \
    "$(jq -n --argjson a "$(gpus two)" --argjson b "$(gpus quad)" '$a - $b | length')" 2
PID=$(state quad pid)
expect_eq "its process holds memory on each of its 4 GPUs" \
    "$("$VRAM" status --json | jq "[.gpus[] | select(any(.processes[]; .pid == $PID))] | length")" 4
expect_eq "every byte written on its 4 GPUs reads back" "$(checksum quad | jq -c '.[0]')" true

# 2. all or none: 2 GPUs are free, quad2 needs 4: the least recently used
#    model goes (two, on 2 GPUs), and quad2 is never placed on fewer
( while :; do "$VRAM" ps --json 2>/dev/null | jq -c '.models[] | select(.name == "quad2") | .gpus | length'; sleep 0.05; done ) >"$T/widths" 2>/dev/null &
JOBS="$JOBS $!"
run "$VRAM" load quad2 --timeout 30s
expect_match "quad2 loads by evicting on the GPUs it needs" "$OUT" "^quad2: ready"
expect_eq "two (least recently used) made room" "$(state two state)" suspended
expect_eq "quad2 is on 4 GPUs" "$(gpus quad2 | jq length)" 4
expect_eq "quad2 never showed on fewer than 4 GPUs" \
    "$(sort -u "$T/widths" | grep -v '^0$\|^4$' | tr '\n' ' ')" ""
expect_eq "quad was left alone" "$(state quad state)" ready

# 3. fast swap of a process over 2 GPUs: out and back, intact on both
run "$VRAM" load two --timeout 30s
expect_match "two comes back (fast swap over 2 GPUs)" "$OUT" "^two: ready"
expect_eq "two was suspended by fast swap" "$(state two suspended_by)" fast
expect_eq "two's memory intact on both GPUs" "$(checksum two | jq -c '.[0]')" true
run "$VRAM" suspend two
expect_match "vram suspend two" "$OUT" "^two: suspended"
run "$VRAM" resume two
expect_match "vram resume two" "$OUT" "^two: ready"
expect_eq "intact again on both GPUs" "$(checksum two | jq -c '.[0]')" true

# 4. a list names the GPUs
run "$VRAM" load pair --timeout 30s
expect_match "a model with a list of GPUs loads" "$OUT" "^pair: ready"
expect_eq "on those GPUs" "$(gpus pair)" "[6,7]"

# 5. peer access over fast swap, through the daemon: both ways of giving
#    it, suspended and resumed by fast swap, reaching and intact after
for m in peered granted; do
    run "$VRAM" load $m --timeout 30s
    expect_match "$m: a model over 2 GPUs with peer access loads" "$OUT" "^$m: ready"
    expect_eq "$m: its GPUs reach each other's memory" "$(peer $m)" true
    run "$VRAM" suspend $m
    expect_match "$m: vram suspend" "$OUT" "^$m: suspended"
    expect_eq "$m: suspended by fast swap, not the driver's checkpoint" "$(state $m suspended_by)" fast
    run "$VRAM" resume $m
    expect_match "$m: vram resume" "$OUT" "^$m: ready"
    expect_eq "$m: its GPUs still reach each other's memory" "$(peer $m)" true
    expect_eq "$m: every byte intact on both GPUs" "$(checksum $m | jq -c '.[0]')" true
done

kill -TERM "$DAEMON"
wait_for 15 sh -c "! kill -0 $DAEMON 2>/dev/null"
expect_eq "SIGTERM: no model process left" "$(pgrep -fc "$TM")" 0

# 6. the daemon's host pool holds a model over 2 GPUs whole: its vram is
#    what it needs on each GPU, so the pool counts it twice (it counted it
#    once, and the model, 1.9 GiB over its 2 GPUs, went to the driver's
#    checkpoint for want of room in a 1 GiB pool)
export VRAM_SOCKET="$T/wide.sock"
cat >"$T/wide.conf" <<CONF
[serve]
socket = $T/wide.sock
state = $T/wide.db
logs = $T/wide-logs
host_budget = 8G
port_base = $((PORTS + 200))

[model wide]
command = $TM --bytes 400M --all-gpus
vram = 1G
gpus = 2
CONF
"$VRAM" serve --config "$T/wide.conf" >"$T/wide.log" 2>&1 &
WIDE=$!
JOBS="$JOBS $WIDE"
wait_for 10 "$VRAM" ps >/dev/null 2>&1 || not_ok "the second daemon starts" "$(cat "$T/wide.log")"
run "$VRAM" load wide --timeout 30s
run "$VRAM" suspend wide
expect_eq "a model over 2 GPUs is suspended by fast swap, into the pool" "$(state wide suspended_by)" fast
# 400 MiB on each GPU: its chunks of host memory hold both
expect_eq "its host memory holds what it had on both GPUs" \
    "$("$VRAM" ps --json | jq '.models[] | select(.name == "wide") | .host_pool_bytes >= 800 * 1048576')" true
run "$VRAM" resume wide
expect_eq "and back, every byte intact on both GPUs" "$(checksum wide | jq -c '.[0]')" true
kill -TERM "$WIDE"
wait_for 15 sh -c "! kill -0 $WIDE 2>/dev/null"
finish
