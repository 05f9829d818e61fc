#!/bin/sh
# What one local user can do to another's vram (docs/security.md), played
# by two unprivileged users this test creates (A attacks, B is the
# victim), on one simulated machine. Each attack fails,
# and the victim's own commands finish, correctly, in seconds:
#   - A suspends or resumes B's process by pid: refused (issue 17, item 5);
#   - A squats the name of B's fast-swap socket before B's process binds it:
#     B's process listens elsewhere and B's vram suspend/resume still take
#     the fast path, B's memory intact (item 5);
#   - configurations that were accepted silently: a section or a setting
#     twice, a token longer than vram keeps, a duration that overflows, a
#     vram no GPU holds, socket = another's (or any) regular file, a file
#     others may write or another user owns (item 8);
#   - a FIFO as the configuration, for --check and for a running daemon's
#     SIGHUP: refused at once, the daemon answers on (item 9).
# Skipped (77) where it cannot make users: not root, or no useradd/setpriv.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/users.sh"
: "${SWAPMODEL:?}" "${TESTMODEL:?}"
make_users || { echo "1..0 # SKIP needs root, useradd and setpriv to make two users"; exit 77; }
# Debian's, which every user can run (a root's pyenv may not be)
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP needs $PY (the squatter)"; exit 77; }

run() { OUT=$("$@" 2>&1); RC=$?; }
# used PID: what the simulated driver says PID holds (root sees everyone's)
used() { "$VRAM" status --json | jq "[.gpus[].processes[] | select(.pid == $1) | .used] | add // 0"; }
# a swapmodel of B's under libvramcap with fast swap, started by a shell that
# first writes its pid (the pid the program will have: it is exec'd) to
# $T/b/NAME.pid and waits for a line on the FIFO $T/b/NAME.go
victim() {
    as_b mkfifo "$T/b/$1.go"
    $AS_B sh -c "echo \$\$ >'$T/b/$1.pid'; read x <'$T/b/$1.go'; exec env LD_PRELOAD='$SHIM' \
        VRAM_SWAP=1 '$SWAPMODEL' --linear 64M >'$T/b/$1.out' 2>'$T/b/$1.err'" &
    JOBS="$JOBS $!"
    wait_for 5 test -s "$T/b/$1.pid"
    VPID=$(cat "$T/b/$1.pid")
    JOBS="$JOBS $VPID"
}
go() { as_b sh -c "echo go >'$T/b/$1.go'" && wait_for 10 grep -q '^ready' "$T/b/$1.out"; }
weights() {
    n=$(grep -c 'weights ok' "$T/b/$1.out")
    kill -USR1 "$2"
    wait_for 10 sh -c "[ \$(grep -c 'weights ok' '$T/b/$1.out') -gt $n ]" && echo ok
}

# ---- item 5: another user's process, by pid ----
victim p
go p || { not_ok "B's process starts" "$(cat "$T/b/p.err")"; finish; exit 1; }
HELD=$(used "$VPID")
for verb in suspend resume; do
    run timeout 10 $AS_A "$VRAM" $verb "$VPID"
    expect_eq "A: vram $verb B's pid: exit 1" "$RC" 1
    expect_match "A: vram $verb B's pid: refused, as kill would" "$OUT" \
        "pid $VPID is another user's \(uid $UID_B\): vram suspends and resumes only your own"
done
run timeout 10 $AS_A "$VRAM" suspend --driver "$VPID"
expect_eq "A: vram suspend --driver B's pid: refused too" "$RC" 1
expect_eq "A: B's process still holds its memory" "$(used "$VPID")" "$HELD"
run timeout 10 $AS_B "$VRAM" suspend "$VPID"
expect_eq "B: vram suspend of its own process works" "$RC" 0
expect_match "B: by the fast path" "$OUT" "suspended pid $VPID \(fast path\)"
run timeout 10 $AS_B "$VRAM" resume "$VPID"
expect_eq "B: vram resume of its own process works" "$RC" 0
expect_eq "B: its memory is intact" "$(weights p "$VPID")" ok
run timeout 10 $AS_A "$VRAM" suspend 4194000
expect_match "A: a pid nobody has: no such process" "$OUT" "no process 4194000"

# ---- item 5: A squats B's fast-swap socket name before B's process binds it ----
victim s
# listens and never accepts: a client that waited at connect() would hang
$AS_A "$PY" -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind('\0vram-swap-$VPID')
s.listen(0)
print('bound', flush=True)
time.sleep(600)
" >"$T/squat.out" 2>&1 &
SQUAT=$!
JOBS="$JOBS $SQUAT"
wait_for 5 grep -q bound "$T/squat.out" || not_ok "A's squatter binds" "$(cat "$T/squat.out")"
go s || { not_ok "B's process starts" "$(cat "$T/b/s.err")"; finish; exit 1; }
expect_match "B's process: says who took its name and where it listens" "$(cat "$T/b/s.err")" \
    "vram-swap-$VPID is taken by pid $SQUAT \(uid $UID_A\), not this process: fast swap listens on vram-swap-$VPID\.[0-9a-f]{16}"
run timeout 10 $AS_B "$VRAM" suspend "$VPID"
expect_eq "B: suspend despite the squatter" "$RC" 0
expect_match "B: still by the fast path" "$OUT" "suspended pid $VPID \(fast path\)"
run timeout 10 $AS_B "$VRAM" resume "$VPID"
expect_eq "B: resume despite the squatter" "$RC" 0
expect_match "B: back by the fast path" "$OUT" "resumed pid $VPID on GPU 0 \(fast path\)"
expect_eq "B: its memory is intact" "$(weights s "$VPID")" ok
# A's own socket under the fallback's name: the client checks whose it is
$AS_A "$PY" -c "
import socket, time
s = socket.socket(socket.AF_UNIX)
s.bind('\0vram-swap-$VPID.0000000000000000')
s.listen(0)
print('bound', flush=True)
time.sleep(600)
" >"$T/squat2.out" 2>&1 &
JOBS="$JOBS $!"
wait_for 5 grep -q bound "$T/squat2.out"
run timeout 10 $AS_B "$VRAM" suspend "$VPID"
expect_match "B: a look-alike fallback name fools nobody" "$OUT" "suspended pid $VPID \(fast path\)"
timeout 10 $AS_B "$VRAM" resume "$VPID" >/dev/null 2>&1

# ---- item 8: configurations accepted silently before ----
# conf FILE EXTRA-SERVE-LINES MODEL-LINES: a configuration of B's
conf() {
    as_b sh -c "printf '[serve]\nsocket = $T/b/vram.sock\nstate = $T/b/vram.db\nlogs = $T/b/logs\n%b\n[model m]\ncommand = $TESTMODEL --port \${PORT}\nvram = 1G\nswap = driver\n%b\n' '$2' '$3' >'$1'"
}
check() { run timeout 10 $AS_B "$VRAM" serve --check --config "$1"; }
conf "$T/b/good.conf" "" ""
check "$T/b/good.conf"
expect_eq "config: a good one passes --check" "$RC" 0
as_b sh -c "cat '$T/b/good.conf' >'$T/b/twice.conf'; printf '\n[model m]\ncommand = rm -rf /\n' >>'$T/b/twice.conf'"
check "$T/b/twice.conf"
expect_eq "config: a section twice: exit 2" "$RC" 2
expect_match "config: a section twice: both lines, and the fix" "$OUT" \
    "twice.conf:12: \[model m\] again \(it began at line 6\): one section each; merge the two, or rename one"
conf "$T/b/cmd2.conf" "" "command = rm -rf /"
check "$T/b/cmd2.conf"
expect_match "config: a setting twice in a section: refused with both lines" "$OUT" \
    "cmd2.conf:10: command again in \[model m\] \(first at line 7\): say it once"
TOKEN=$(printf '%0150d' 7)
conf "$T/b/token.conf" "token = $TOKEN" ""
check "$T/b/token.conf"
expect_eq "config: a token longer than 127: exit 2" "$RC" 2
expect_match "config: a token longer than 127: file:line and the fix" "$OUT" \
    "token.conf:5: token: 150 characters, more than the 127 vram keeps: a shorter token"
conf "$T/b/long.conf" "" "start_timeout = 99999999999999999999999h"
check "$T/b/long.conf"
expect_match "config: a start_timeout that overflows: refused" "$OUT" \
    "long.conf:10: start_timeout '9+h': a duration from 1s to 24h"
conf "$T/b/huge.conf" "" ""
as_b sed -i 's/^vram = 1G$/vram = 999999T/' "$T/b/huge.conf"
check "$T/b/huge.conf"
expect_eq "config: vram no GPU here holds: exit 2" "$RC" 2
expect_match "config: vram no GPU here holds: file:line and the fix" "$OUT" \
    "huge.conf:8: \[model m\] vram = 999999.0 TiB on each of 1 GPU: more than 15.[0-9] GiB, .*lower vram, or raise budget"
run timeout 10 $AS_B "$VRAM" serve --config "$T/b/huge.conf"
expect_eq "config: a daemon with it does not start" "$RC" 1
expect_match "config: and says why" "$OUT" "huge.conf:8: \[model m\] vram = 999999.0 TiB"
# socket = a file of A's (in the shared folder, as /dev/shm): nobody's daemon removes it
as_a sh -c "echo precious >'$T/shared/a-file'"
conf "$T/b/sock.conf" "" ""
as_b sed -i "s#^socket = .*#socket = $T/shared/a-file#" "$T/b/sock.conf"
check "$T/b/sock.conf"
expect_match "config: socket = a regular file: refused with file:line" "$OUT" \
    "sock.conf:2: socket = $T/shared/a-file: a regular file is there, not a socket vram serve left"
cp "$T/b/sock.conf" "$T/root-sock.conf" # root's daemon, the one that could remove anything
run timeout 10 "$VRAM" serve --config "$T/root-sock.conf"
expect_eq "config: root's daemon with socket = A's file: exit 1" "$RC" 1
expect_eq "config: A's file is still there, intact" "$(cat "$T/shared/a-file")" precious
# a configuration B's daemon would run commands from, written by A
cp "$T/b/good.conf" "$T/shared/a.conf" && chown "$USER_A" "$T/shared/a.conf"
check "$T/shared/a.conf"
expect_match "config: another user's file: refused" "$OUT" \
    "a.conf: owned by uid $UID_A, neither root nor this user: its commands would run as this user"
as_b cp "$T/b/good.conf" "$T/b/open.conf"
as_b chmod 666 "$T/b/open.conf"
check "$T/b/open.conf"
expect_match "config: a file others may write: refused, with the fix" "$OUT" \
    "open.conf: others may write it \(mode 0666\): its commands would run as this user; chmod go-w it"

# ---- item 9: a FIFO as the configuration ----
as_a mkfifo "$T/shared/fifo.conf"
check "$T/shared/fifo.conf"
expect_eq "config: --check on a FIFO returns (exit 2), does not wait for a writer" "$RC" 2
expect_match "config: --check on a FIFO says what it is" "$OUT" \
    "fifo.conf: a FIFO, not a regular file: vram serve reads its configuration only from a file"
# B's daemon, its configuration swapped for a FIFO, then SIGHUP
PORT=$((10000 + $$ % 20000))
conf "$T/b/live.conf" "listen = 127.0.0.1:$PORT\ntoken = $(printf '%0127d' 5)" ""
$AS_B "$VRAM" serve --config "$T/b/live.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
ps_b() { timeout 5 $AS_B "$VRAM" ps --socket "$T/b/vram.sock" >/dev/null 2>&1; }
wait_for 10 ps_b || not_ok "B's daemon starts" "$(cat "$T/serve.log")"
code() { curl -s -o /dev/null -w '%{http_code}' -m 5 -H "Authorization: Bearer $1" "http://127.0.0.1:$PORT/v1/models"; }
expect_eq "token: 127 characters, the whole of it: served" "$(code "$(printf '%0127d' 5)")" 200
expect_eq "token: all but its last character: 401" "$(code "$(printf '%0126d' 0)")" 401
expect_eq "token: longer than it: 401" "$(code "$(printf '%0128d' 5)")" 401
as_b mv "$T/b/live.conf" "$T/b/live.conf.good"
as_b mkfifo "$T/b/live.conf"
kill -HUP "$DAEMON"
wait_for 5 grep -q "reload refused" "$T/serve.log"
expect_match "SIGHUP on a FIFO: the reload is refused, and says why" "$(cat "$T/serve.log")" \
    "reload refused, the running configuration stays: .*live.conf: a FIFO, not a regular file"
ps_b && ok "SIGHUP on a FIFO: the daemon still answers" || not_ok "SIGHUP on a FIFO: the daemon still answers"
as_b rm "$T/b/live.conf"
as_b mv "$T/b/live.conf.good" "$T/b/live.conf"
as_b sed -i 's/^vram = 1G$/vram = 999999T/' "$T/b/live.conf"
kill -HUP "$DAEMON"
wait_for 5 sh -c "[ \$(grep -c 'reload refused' '$T/serve.log') -ge 2 ]"
expect_match "SIGHUP with a vram no GPU holds: refused with file:line" "$(cat "$T/serve.log")" \
    "reload refused, the running configuration stays: .*live.conf:[0-9]+: \[model m\] vram = 999999.0 TiB"
as_b sed -i 's/^vram = 999999T$/vram = 2G/' "$T/b/live.conf"
kill -HUP "$DAEMON"
wait_for 5 grep -q "configuration reloaded" "$T/serve.log"
expect_match "SIGHUP with a good file again: reloaded" "$(cat "$T/serve.log")" "configuration reloaded"
kill -TERM "$DAEMON"
wait_for 10 sh -c "! kill -0 $DAEMON 2>/dev/null"
expect_eq "B's daemon removed its own socket at exit" "$(test -e "$T/b/vram.sock" && echo left || echo gone)" gone

finish
