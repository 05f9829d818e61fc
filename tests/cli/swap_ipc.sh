#!/bin/sh
# Memory shared between processes by CUDA IPC (cuIpcGetMemHandle /
# cuIpcOpenMemHandle) under fast swap, against the simulated driver: a
# process under vram run --swap shares its cuMemAlloc memory (VMM memory,
# which the driver's own handles do not cover); when it is suspended, the
# process that opened its memory waits, and both see the same bytes at the
# same addresses after; suspended and resumed together in either order,
# both intact; an importer that cannot be held sends the exporter to the
# driver's checkpoint, saying why; under vram serve, a model whose worker
# maps its server's memory is suspended and resumed whole by fast swap.
. "$(dirname "$0")/lib.sh"
: "${POOLMODEL:?}" "${TESTMODEL:?}"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"

run() { OUT=$("$@" 2>&1); RC=$?; return $RC; }
pid_used() { "$VRAM" status --json | jq "[.gpus[].processes[] | select(.pid == $1) | .used] | add // 0"; }

# pm NAME FD [VRAM_RUN_ARGS...]: poolmodel under vram run, its commands on
# file descriptor FD (3 to 5), its answers in $T/NAME.out; its pid in
# $T/NAME.pid
pm() {
    name=$1 fd=$2
    shift 2
    mkfifo "$T/$name.in"
    "$VRAM" run --quiet "$@" -- "$POOLMODEL" <"$T/$name.in" >"$T/$name.out" 2>"$T/$name.err" &
    JOBS="$JOBS $!"
    eval "exec $fd>\"\$T/\$name.in\""
    wait_for 20 grep -q '^ready' "$T/$name.out"
    sed -n 's/^ready //p' "$T/$name.out" >"$T/$name.pid"
    JOBS="$JOBS $(cat "$T/$name.pid")"
}
pidof_pm() { cat "$T/$1.pid"; }
lines() { wc -l <"$T/$1.out"; }
answered() { [ "$(lines "$1")" -gt "$2" ]; }
# send NAME FD COMMAND...: sends, and says how many answers came before
send() {
    _name=$1 _fd=$2
    shift 2
    _n=$(lines "$_name")
    echo "$*" >&"$_fd"
}
# reply NAME [SECONDS]: the answer to what send sent last (empty if none in time)
reply() { wait_for "${2:-90}" answered "$1" "$_n" && sed -n "$((_n + 1))p" "$T/$1.out"; }
ask() { send "$@"; reply "$1"; }

# 1. shared: the importer sees the exporter's bytes and the exporter the
#    importer's
pm e 3 --swap --gpu 0
pm i 4 --swap --gpu 0
E=$(pidof_pm e)
I=$(pidof_pm i)
ask e 3 legacy w 8M >/dev/null
ask e 3 fill w 1 >/dev/null
H=$(ask e 3 export w | sed -n 's/^handle //p')
expect_match "shared: a process under fast swap shares its cuMemAlloc memory" "$H" '^[0-9a-f]{128}$'
expect_match "shared: another opens it" "$(ask i 4 import w 8M "$H")" '^addr w 0x'
expect_eq "shared: and reads the exporter's bytes" "$(ask i 4 check w 1)" ok
ask i 4 fill w 2 >/dev/null
expect_eq "shared: the exporter sees the importer's" "$(ask e 3 check w 2)" ok

# 2. the exporter suspended alone: the importer waits, then goes on
BEFORE=$(pid_used "$E")
run "$VRAM" suspend "$E"
expect_match "exporter out: by fast swap" "$OUT" "suspended pid $E \(fast path\)"
expect_eq "exporter out: its memory left the GPU" "$(pid_used "$E")" $((300 * MiB))
send i 4 check w 2
expect_eq "exporter out: the importer's use of it waits" "$(reply i 1)" ""
run "$VRAM" resume "$E"
expect_match "exporter back: by fast swap" "$OUT" "resumed pid $E on GPU 0 \(fast path\)"
expect_eq "exporter back: the importer goes on and reads the same bytes" "$(reply i)" ok
expect_eq "exporter back: its memory is back" "$(pid_used "$E")" "$BEFORE"
ask i 4 fill w 3 >/dev/null
expect_eq "exporter back: still shared, at the same addresses" "$(ask e 3 check w 3)" ok

# 3. both out and back, either order
for first in importer exporter; do
    order="$I $E"
    [ $first = exporter ] && order="$E $I"
    FAILS=""
    for p in $order; do run "$VRAM" suspend "$p" || FAILS="$FAILS $OUT"; done
    expect_eq "together ($first first): both suspended" "$FAILS" ""
    expect_eq "together ($first first): both off the GPU" "$(pid_used "$E") $(pid_used "$I")" \
        "$((300 * MiB)) $((300 * MiB))"
    for p in $order; do run "$VRAM" resume "$p" || FAILS="$FAILS $OUT"; done
    expect_eq "together ($first first, back in that order): both resumed" "$FAILS" ""
    expect_eq "together ($first first): both read the same bytes" "$(ask i 4 check w 3) $(ask e 3 check w 3)" "ok ok"
done
ask e 3 fill w 4 >/dev/null
expect_eq "together: still shared" "$(ask i 4 check w 4)" ok

# 4. an importer without fast swap cannot be held: the exporter goes to the
#    driver's checkpoint, and says why
pm n 5 --gpu 0
expect_match "not holdable: a capped process opens it" "$(ask n 5 import w 8M "$H")" '^addr w 0x'
expect_eq "not holdable: and reads it" "$(ask n 5 check w 4)" ok
run "$VRAM" suspend "$E"
expect_match "not holdable: the exporter takes the driver's path" "$OUT" '\(driver path\)'
expect_match "not holdable: and says why" "$OUT" "pid $(pidof_pm n) maps 8.00 MiB of its memory \(CUDA IPC\) and does not run with fast swap on"
"$VRAM" resume "$E" >/dev/null 2>&1
ask n 5 close w >/dev/null
run "$VRAM" suspend "$E"
expect_match "not holdable: once it let go, fast swap again" "$OUT" '\(fast path\)'
"$VRAM" resume "$E" >/dev/null 2>&1
expect_eq "not holdable: intact" "$(ask i 4 check w 4)" ok
exec 3>&- 4>&- 5>&-

# 5. vram serve: a model of two processes, a server and a worker mapping
#    its memory (CUDA IPC), out and back by fast swap, intact for both
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 17) % 20000))
{
    serve_head
    cat <<CONF

[model two]
command = $TESTMODEL --bytes 64M --share
vram = 1G
gpu = 1
CONF
} >"$T/vram.conf"
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
D=$!
JOBS="$JOBS $D"
wait_for 20 "$VRAM" ps >/dev/null 2>&1
"$VRAM" load two >/dev/null 2>&1
PORT=$("$VRAM" ps --json | jq -r '.models[] | select(.name == "two") | .port')
expect_eq "serve: the worker maps the server's memory" \
    "$(curl -s -m 20 "http://127.0.0.1:$PORT/shared" | jq -c .shared)" true
run "$VRAM" suspend two
expect_eq "serve: the model suspended by fast swap" \
    "$("$VRAM" ps --json | jq -r '.models[] | select(.name == "two") | "\(.state) \(.suspended_by)"')" \
    "suspended fast"
"$VRAM" resume two >/dev/null 2>&1
expect_eq "serve: back, the server's memory intact" \
    "$(curl -s -m 20 "http://127.0.0.1:$PORT/checksum" | jq -c .intact)" true
expect_eq "serve: and the worker reads it all, the same" \
    "$(curl -s -m 20 "http://127.0.0.1:$PORT/shared" | jq -c .shared)" true
kill -TERM "$D"
wait "$D" 2>/dev/null

finish
