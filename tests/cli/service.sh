#!/bin/sh
# vram serve as a service, against the simulated driver: it finds
# libvramcap in an installed tree as vram run does, and refuses to start
# (and --check fails) when a model with fast swap would run without it;
# it tells systemd when it is ready, reloading and stopping, and keeps the
# notification socket from its models; its log carries the journal's level
# prefixes under systemd and timestamps elsewhere, and --quiet leaves out
# the models' lives; run as a user it keeps its files in the XDG places and
# the clients find its socket; a load that waits shows a progress line on a
# terminal only.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}" "${SHIM:?}" "${PKGLIBDIR:?}" "${PKGLIBDIR_REL:?}"
cp "$TESTMODEL" "$T/testmodel-svc"
TESTMODEL="$T/testmodel-svc"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
SIMDIR="$(dirname "$VRAM")/sim"
export LD_LIBRARY_PATH="$SIMDIR" VRAM_SIM_LIBDIR="$SIMDIR"
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 7) % 20000))
unset NOTIFY_SOCKET JOURNAL_STREAM VRAM_SHIM

# conf DIR SWAP [SERVE_LINES]: a daemon with two small models
conf() {
    printf '[serve]\nsocket = %s/vram.sock\nstate = %s/vram.db\nlogs = %s/logs\nport_base = %s\n%s\n' \
        "$1" "$1" "$1" "$PORTS" "${3:-}"
    printf '\n[model m1]\ncommand = %s --bytes 64M\nvram = 1G\ngpu = 0\nswap = %s\n' "$TESTMODEL" "$2"
    printf '\n[model slow]\ncommand = %s --bytes 64M --startup 2\nvram = 1G\ngpu = 0\nswap = driver\n' \
        "$TESTMODEL"
}
run() { OUT=$("$@" 2>&1); RC=$?; }
# daemon BINARY CONFIG LOG [ARGS]: started in the background, DAEMON its pid
daemon() {
    "$1" serve --config "$2" ${4:-} >"$3" 2>&1 &
    DAEMON=$!
    JOBS="$JOBS $DAEMON"
    wait_for 10 "$VRAM" ps --socket "$(dirname "$2")/vram.sock" >/dev/null 2>&1 || cat "$3"
    [ "${4:-}" = --quiet ] || wait_for 5 grep -q "listening on" "$3" # the log goes out every tick
}
stop_daemon() {
    kill -TERM "$DAEMON" 2>/dev/null
    wait_for 20 sh -c "! kill -0 $DAEMON 2>/dev/null"
}
model_pid() { "$VRAM" ps --json --socket "$1" | jq -r ".models[] | select(.name == \"$2\") | .pid"; }
environ() { tr '\0' '\n' <"/proc/$1/environ"; }

# --- libvramcap in the installed tree, as meson install lays it out ---------
mkdir -p "$T/inst/bin" "$T/inst/bin/$PKGLIBDIR_REL" "$T/i"
cp "$VRAM" "$T/inst/bin/vram"
cp "$SHIM" "$T/inst/bin/$PKGLIBDIR_REL/libvramcap.so"
WANT=$(realpath "$T/inst/bin/$PKGLIBDIR_REL/libvramcap.so")
conf "$T/i" fast >"$T/i/vram.conf"
run "$T/inst/bin/vram" serve --check --config "$T/i/vram.conf"
expect_eq "--check: exit 0 with the installed tree" "$RC" 0
expect_match "--check names libvramcap in lib/.../vram beside bin/" "$OUT" "^libvramcap: $WANT\$"
run "$T/inst/bin/vram" run -- sh -c 'echo "PRELOAD=$LD_PRELOAD"'
expect_match "vram run finds the same library" "$OUT" "PRELOAD=$WANT"
daemon "$T/inst/bin/vram" "$T/i/vram.conf" "$T/i.log" --verbose
run "$VRAM" load m1 --socket "$T/i/vram.sock"
expect_eq "the installed daemon loads a fast-swap model" "$RC" 0
P=$(model_pid "$T/i/vram.sock" m1)
expect_match "its environment preloads the installed libvramcap" "$(environ "$P")" "^LD_PRELOAD=$WANT\$"
expect_match "with fast swap on" "$(environ "$P")" "^VRAM_SWAP=1\$"
expect_eq "vram ps --json: schema 1, the models" \
    "$("$VRAM" ps --json --socket "$T/i/vram.sock" | jq -c '[.schema, [.models[].name]]')" '[1,["m1","slow"]]'
expect_eq "vram ps says fast" "$("$VRAM" ps --json --socket "$T/i/vram.sock" | jq -r '.models[] | select(.name == "m1") | .swap')" fast
expect_match "the log says where libvramcap is, with a time and a level" "$(cat "$T/i.log")" \
    "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} info vram serve: libvramcap: $WANT"
expect_match "a model's start is an info line" "$(cat "$T/i.log")" " info vram serve: m1: ready"
expect_match "--verbose: the scheduler's actions, at debug" "$(cat "$T/i.log")" \
    " debug vram serve: scheduler: start m1 \(gpu 0"
stop_daemon
expect_eq "SIGTERM: the daemon and its model are gone" \
    "$(kill -0 "$DAEMON" 2>/dev/null || kill -0 "$P" 2>/dev/null || echo gone)" gone

# --- no libvramcap anywhere: loud, never a model without its swap ------------
mkdir -p "$T/lonely" "$T/l"
cp "$VRAM" "$T/lonely/vram"
conf "$T/l" fast >"$T/l/vram.conf"
if [ -e "$PKGLIBDIR/libvramcap.so" ]; then
    ok "# skip: libvramcap is installed in $PKGLIBDIR on this machine"
else
    run "$T/lonely/vram" serve --check --config "$T/l/vram.conf"
    expect_eq "--check without libvramcap: exit 1" "$RC" 1
    expect_match "it names the model and where it looked" "$OUT" \
        "model m1 runs under libvramcap \(swap = fast\), but libvramcap.so is not installed with this vram: looked in $T/lonely/"
    run "$T/lonely/vram" serve --config "$T/l/vram.conf"
    expect_eq "the daemon refuses to start" "$RC" 1
    expect_match "and says why, as an error" "$OUT" "error vram serve: model m1 runs under libvramcap"
    expect_eq "nothing listens" "$([ -S "$T/l/vram.sock" ] && echo listening || echo none)" none
    conf "$T/l" driver >"$T/l/vram.conf"
    run "$T/lonely/vram" serve --check --config "$T/l/vram.conf"
    expect_eq "no model needs it: --check passes" "$RC" 0
    expect_match "and says it is missing" "$OUT" "^libvramcap: missing, and no model needs it now"
fi
run env VRAM_SHIM="$T/nowhere.so" "$VRAM" serve --check --config "$T/i/vram.conf"
expect_match "VRAM_SHIM naming nothing is an error, not a fallback" "$OUT" "VRAM_SHIM=$T/nowhere.so: No such file"

# --- systemd's notifications and the journal's levels ------------------------
mkdir -p "$T/n"
conf "$T/n" fast >"$T/n/vram.conf"
python3 "$SRC/tests/helpers/notify_listen.py" "$T/notify" "$T/n/notes" &
JOBS="$JOBS $!"
wait_for 5 test -e "$T/n/notes.ready"
: >"$T/n/d.log"
NOTIFY_SOCKET="$T/notify" JOURNAL_STREAM="$(stat -c %d:%i "$T/n/d.log")" \
    "$VRAM" serve --config "$T/n/vram.conf" 2>>"$T/n/d.log" &
DAEMON=$!
JOBS="$JOBS $DAEMON"
wait_for 10 grep -q "READY=1" "$T/n/notes"
expect_match "READY=1 once it listens, from the daemon's pid, with a status" "$(cat "$T/n/notes")" \
    "^$DAEMON READY=1\|STATUS=2 models, 2 GPUs\$"
run "$VRAM" ps --socket "$T/n/vram.sock"
expect_eq "and it answers then" "$RC" 0
"$VRAM" load m1 --socket "$T/n/vram.sock" >/dev/null 2>&1
P=$(model_pid "$T/n/vram.sock" m1)
expect_eq "the model does not inherit NOTIFY_SOCKET" "$(environ "$P" | grep -c '^NOTIFY_SOCKET=')" 0
kill -HUP "$DAEMON"
wait_for 10 sh -c "[ \$(grep -c READY=1 '$T/n/notes') -ge 2 ]"
expect_eq "SIGHUP: RELOADING=1, then READY=1" "$(sed 's/^[0-9]* //' "$T/n/notes" | tail -2 | tr '\n' ' ')" \
    "RELOADING=1 READY=1 "
kill -TERM "$DAEMON"
wait_for 20 sh -c "! kill -0 $DAEMON 2>/dev/null"
expect_eq "SIGTERM: STOPPING=1" "$(sed 's/^[0-9]* //' "$T/n/notes" | tail -1)" "STOPPING=1"
fflush_wait() { grep -q "stopping the models" "$T/n/d.log"; }
wait_for 5 fflush_wait
expect_eq "every line to the journal carries a syslog level" "$(grep -cv '^<[0-7]>vram serve: ' "$T/n/d.log")" 0
expect_match "the ready line is notice (5)" "$(cat "$T/n/d.log")" "^<5>vram serve: 2 models, 2 GPUs, listening on"
expect_match "a model's start is info (6)" "$(cat "$T/n/d.log")" "^<6>vram serve: m1: ready"

# --quiet: warnings and errors only
mkdir -p "$T/q"
conf "$T/q" driver "listen = 0.0.0.0:$((PORTS + 500))" >"$T/q/vram.conf"
daemon "$VRAM" "$T/q/vram.conf" "$T/q.log" --quiet
"$VRAM" load m1 --socket "$T/q/vram.sock" >/dev/null 2>&1
stop_daemon
expect_match "--quiet keeps warnings" "$(cat "$T/q.log")" "warning vram serve: the proxy listens on 0.0.0.0"
expect_eq "--quiet leaves out the models' lives" "$(grep -c 'm1: ready\|listening on' "$T/q.log")" 0

# --- a progress line on a terminal, for a wait over a second -----------------
mkdir -p "$T/p"
conf "$T/p" driver >"$T/p/vram.conf"
daemon "$VRAM" "$T/p/vram.conf" "$T/p.log"
script -qec "$VRAM load slow --socket $T/p/vram.sock" /dev/null >"$T/p/tty.out" 2>&1
expect_match "on a terminal: 'loading slow ... 1.N s'" "$(tr '\r' '\n' <"$T/p/tty.out")" "^loading slow \.\.\. 1\.[0-9] s"
expect_match "then the answer" "$(tr '\r' '\n' <"$T/p/tty.out")" "^slow: ready on GPU 0"
"$VRAM" unload slow --socket "$T/p/vram.sock" >/dev/null 2>&1
run "$VRAM" load slow --socket "$T/p/vram.sock"
expect_eq "not a terminal: the answer alone" "$OUT" "$(printf '%s' "$OUT" | grep -v 'loading')"
expect_match "not a terminal: no progress line" "$OUT" "^slow: ready on GPU 0"
stop_daemon

# --- as a user: the XDG places ---------------------------------------------
U=$T/user
mkdir -p "$U/home/.config/vram" "$U/run"
chmod 755 "$T"
conf x driver | sed '/^socket\|^state\|^logs/d' >"$U/home/.config/vram/vram.conf"
chown -R 65534:65534 "$U"
chmod 700 "$U/run"
as_user() {
    setpriv --reuid=65534 --regid=65534 --clear-groups env -u VRAM_SOCKET HOME="$U/home" \
        XDG_RUNTIME_DIR="$U/run" VRAM_SIM_STATE="$U/ledger" VRAM_RUN_DIR="$U/run" "$@"
}
run as_user "$VRAM" serve --check
expect_eq "as a user: --check reads ~/.config/vram/vram.conf" "$RC" 0
expect_match "socket in XDG_RUNTIME_DIR, state and logs in ~/.local/state" "$OUT" \
    "socket $U/run/vram/vram.sock, state $U/home/.local/state/vram/vram.db, logs $U/home/.local/state/vram/logs"
run as_user env -u XDG_RUNTIME_DIR "$VRAM" serve --check
expect_match "no XDG_RUNTIME_DIR and no socket line: refused with the fix" "$OUT" \
    "no place for the socket: XDG_RUNTIME_DIR is not set .*give socket = PATH in \[serve\]"
as_user "$VRAM" serve >"$T/user.log" 2>&1 &
SUB=$!
JOBS="$JOBS $SUB"
wait_for 10 as_user "$VRAM" ps >/dev/null 2>&1
# a function in the background is a subshell: the daemon is its child
# (or the subshell itself, where the shell execs a last command)
DAEMON=$(pgrep -P "$SUB" | head -1)
DAEMON=${DAEMON:-$SUB}
JOBS="$JOBS $DAEMON"
run as_user "$VRAM" load m1
expect_eq "the user's clients find the user daemon's socket by themselves" "$RC" 0
expect_eq "its model's log is in ~/.local/state/vram/logs" \
    "$([ -f "$U/home/.local/state/vram/logs/m1.log" ] && echo yes)" yes
expect_eq "the runtime folder is the user's alone" "$(stat -c %a "$U/run/vram")" 700
MPID=$(as_user "$VRAM" ps --json | jq -r '.models[] | select(.name == "m1") | .pid')
stop_daemon
expect_eq "the user's daemon stops, and its model with it" \
    "$(kill -0 "$DAEMON" 2>/dev/null || kill -0 "$MPID" 2>/dev/null || echo gone)" gone
finish
