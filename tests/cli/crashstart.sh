#!/bin/sh
# A daemon killed (SIGKILL) while it starts a model (issue 28, item 7): at
# each point around the start (src/daemon/testpoint.h: the model's process
# forked but not recorded, recorded but not released, released), then a
# new daemon and `vram load` again: exactly one copy of the model runs,
# never an orphan beside the new one. Before, the process was recorded only
# after the fork, and a daemon killed in between left a model no one knew.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
# a copy of our own, so that counting its processes never sees another test's
cp "$TESTMODEL" "$T/testmodel-crash"
TESTMODEL="$T/testmodel-crash"
daemon_env 3 700
{
    serve_head
    cat <<CONF
min_resident = 0

[model m]
command = $TESTMODEL --bytes 1G
vram = 1.5G
gpu = 0
CONF
} >"$T/vram.conf"

start_daemon() {
    "$VRAM" serve --config "$T/vram.conf" >>"$T/serve.log" 2>&1 &
    DAEMON=$!
    JOBS="$JOBS $DAEMON"
    wait_for 10 sh -c "[ -S '$T/vram.sock' ] && '$VRAM' ps >/dev/null 2>&1"
}
copies() { pgrep -fc "^$TESTMODEL" || true; }
trap 'pkill -9 -f "^$TESTMODEL" 2>/dev/null; cleanup' EXIT

for point in start-forked start-recorded start-released; do
    rm -f "$T/vram.sock"
    VRAM_TEST_DIE_AT=$point start_daemon || not_ok "$point: the daemon starts" "$(cat "$T/serve.log")"
    "$VRAM" load m >"$T/load.out" 2>&1
    wait $DAEMON
    expect_eq "$point: the daemon died there (SIGKILL)" "$?" 137
    rm -f "$T/vram.sock"
    start_daemon || not_ok "$point: a new daemon starts" "$(cat "$T/serve.log")"
    "$VRAM" load m >"$T/load.out" 2>&1
    expect_eq "$point: the new daemon loads the model" "$?" 0
    # a process left unreleased exits as soon as the first daemon is gone;
    # one that ran its command would still run: wait for the count to settle
    wait_for 5 sh -c "[ \$(pgrep -fc '^$TESTMODEL') -le 1 ]"
    expect_eq "$point: exactly one copy of the model runs" "$(copies)" 1
    expect_eq "$point: and it is the one the daemon knows" \
        "$(pgrep -f "^$TESTMODEL")" "$("$VRAM" ps --json | jq -r '.models[] | select(.name == "m") | .pid')"
    kill -9 $DAEMON
    wait $DAEMON 2>/dev/null
    pkill -9 -f "^$TESTMODEL"
    wait_for 5 sh -c "! pgrep -f '^$TESTMODEL' >/dev/null"
done
finish
