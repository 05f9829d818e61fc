#!/bin/sh
# Models apart (issue 42, item 1), played as a hostile model would. Under
# a root daemon with the default configuration and two models, one of them
# hostile (isolation_hostile.py: it scans its own descriptors, every
# /proc/PID/fd and /proc/PID/mem it can open, /dev/shm, and sends `suspend`
# with memfds of its own to every fast-swap socket of its daemon's
# processes), the other a victim (testmodel: a known pattern in its GPU
# memory):
#   - both models run as vram-model, the default, not as root, in no group
#     of root's or of the control socket's;
#   - with the victim running, suspended, resumed and suspended again, the
#     hostile model finds none of its bytes, opens none of the daemon's or
#     the victim's descriptors or memory, and the victim copies nothing
#     into the hostile model's memfds (it refuses, and says why);
#   - the victim's bytes are intact after every swap;
#   - vram serve --check says what stops a model's user: a user that does
#     not exist, root, a member of the socket's group, a model file it may
#     not read, libvramcap it may not read (and a model whose user lost
#     libvramcap after the check is not run: its own process checks).
# Then the same attack under a user's daemon (as USER_A, users.sh),
# where both models run as that user: still nothing found, nothing obeyed.
# Before the fix, every model ran as root: the hostile model read the
# victim's bytes through /proc/<daemon>/fd and /proc/<victim>/mem, and the
# victim suspended itself into the hostile model's memfds.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}" "${SHIM:?}"
[ "$(id -u)" -eq 0 ] || { echo "1..0 # SKIP needs root: the daemon under test is root's"; exit 77; }
PY=/usr/bin/python3 # Debian's, which every user can run (a root's pyenv may not be)
[ -x "$PY" ] || { echo "1..0 # SKIP needs $PY (the hostile model)"; exit 77; }
cp "$TESTMODEL" "$T/testmodel-iso"
cp "$(dirname "$0")/isolation_hostile.py" "$T/hostile.py"
chmod a+rx "$T/testmodel-iso" "$T/hostile.py"
daemon_env 17 700

model_conf() { # the two models, as the default configuration runs them
    cat <<CONF

[model victim]
command = $1 --bytes 64M
vram = 256M
gpu = 0

[model hostile]
command = $PY $2 victim
vram = 100M
gpu = 1
CONF
}
{ serve_head; model_conf "$T/testmodel-iso" "$T/hostile.py"; } >"$T/vram.conf"

run() { OUT=$("$@" 2>&1); RC=$?; }
field() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
status_of() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }
# round N: the hostile model's attack, its JSON in $T/roundN.json
attack() { curl -s -m 300 "http://127.0.0.1:$HPORT/attack" >"$T/round$1.json"; }
j() { jq -c "$2" "$T/round$1.json" 2>/dev/null; }
checksum() { curl -s -m 30 "http://127.0.0.1:$(field victim port)/checksum" | jq -r .intact; }
# check_round N WHEN: what the hostile model got, with the victim as WHEN says
check_round() {
    expect_eq "$2: the hostile model finds none of the victim's bytes" "$(j $1 .found)" "[]"
    expect_eq "$2: it opens none of the daemon's or the victim's descriptors" \
        "$(j $1 "[.fd_dirs[] | select(. == $D or . == $VPID)]")" "[]"
    expect_eq "$2: nor their memory" "$(j $1 "[.mem_opened[] | select(. == $D or . == $VPID)]")" "[]"
    expect_eq "$2: it reached the victim's fast-swap socket" "$(j $1 "[.sockets[] | select(. == $VPID)] | length")" 1
    expect_eq "$2: no process obeys its suspend" "$(j $1 .obeyed)" "[]"
    expect_eq "$2: none copies its memory into the hostile model's memfds" "$(j $1 .copied)" "[]"
    expect_match "$2: the victim refuses, and says why" "$(j $1 '.refused[]')" \
        "pid $VPID: error refused: pid $HPID is not the vram serve that runs this model \\(pid $D\\)"
}

"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
D=$!
JOBS="$JOBS $D"
trap 'kill -TERM $D 2>/dev/null; wait $D 2>/dev/null; cleanup' EXIT
wait_for 20 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
run "$VRAM" load victim
expect_match "the victim loads" "$OUT" "^victim: ready"
run "$VRAM" load hostile
expect_match "the hostile model loads" "$OUT" "^hostile: ready"
VPID=$(field victim pid)
HPID=$(field hostile pid)
HPORT=$(field hostile port)
MODEL_UID=$(id -u vram-model)
SOCK_GID=$(getent group vram | cut -d: -f3)
for m in victim hostile; do
    p=$(field $m pid)
    expect_eq "$m runs as vram-model, the default (real, effective, saved, file system)" \
        "$(status_of "$p" Uid | tr -s '\t ' ' ')" "$MODEL_UID $MODEL_UID $MODEL_UID $MODEL_UID"
    groups=" $(status_of "$p" Groups) $(status_of "$p" Gid | tr -s '\t' ' ') "
    bad=$(printf '%s\n' "$groups" | grep -Ec " (0${SOCK_GID:+|$SOCK_GID}) ")
    expect_eq "$m is in no group of root's or of the control socket's ($groups)" "$bad" 0
done

# round 1: the victim running, its bytes in its GPU memory
attack 1
expect_eq "the attack ran, as vram-model" "$(j 1 .uid)" "$MODEL_UID"
check_round 1 "the victim running"
expect_eq "the victim was not suspended behind the daemon's back" "$(field victim state)" ready
expect_eq "its bytes are intact" "$(checksum)" true

# rounds 2 and 3: suspended (its bytes in host memory the daemon gave it), twice
for r in 2 3; do
    run "$VRAM" suspend victim
    expect_match "swap $r: the victim is suspended by fast swap" "$OUT$(field victim suspended_by)" "fast$"
    attack $r
    check_round $r "swap $r, the victim suspended"
    run "$VRAM" resume victim
    expect_eq "swap $r: the victim resumes" "$RC $(field victim state)" "0 ready"
    expect_eq "swap $r: its bytes are intact" "$(checksum)" true
done

# ---- what stops a model's user, said by vram serve --check ----
check_head() { # another daemon's places: this one runs meanwhile
    printf '[serve]\nsocket = %s/check.sock\nstate = %s/check.db\nlogs = %s/check-logs\nport_base = %s\n' \
        "$T" "$T" "$T" "$((PORTS + 50))"
}
check_conf() { # LINES...: [serve] with them, and one model
    { check_head; for l in "$@"; do echo "$l"; done
      printf '\n[model m]\ncommand = %s/testmodel-iso --bytes 1M\nvram = 100M\n' "$T"; } >"$T/check.conf"
    run "$VRAM" serve --check --config "$T/check.conf"
}
check_conf "user = vram-nosuchuser"
expect_match "a user that does not exist: refused" "$RC $OUT" "^2 .*model m: user = vram-nosuchuser: no user 'vram-nosuchuser' on this system"
check_conf
expect_match "--check says who the models run as: vram-model, by default" "$OUT" \
    "^models run as vram-model \(1 model\)$"
check_conf "user = ../root"
expect_match "a name no user can have: refused where it is written" "$RC $OUT" \
    "^2 .*check.conf:6: user '../root': a name of letters, digits, '.', '_' and '-'"
check_conf "user = root"
expect_match "root: refused, with the fix" "$RC $OUT" "^2 .*model m: user = root \(in \[serve\]\) is root: vram serve runs no model as root; give it a user of its own"
if [ -n "$SOCK_GID" ]; then
    id -u vramiso_ctl >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin -G vram vramiso_ctl >/dev/null 2>&1
    check_conf "user = vramiso_ctl"
    expect_match "a member of the socket's group: refused" "$RC $OUT" \
        "^2 .*model m: user vramiso_ctl is in the group vram, whose members control vram serve"
    userdel vramiso_ctl 2>/dev/null
fi
head -c 4096 /dev/urandom >"$T/secret.gguf"
chmod 600 "$T/secret.gguf"
{ check_head; printf '\n[model m]\ncommand = %s/testmodel-iso --bytes 1M\nvram = 100M\nfile = %s/secret.gguf\n' \
    "$T" "$T"; } >"$T/check.conf"
run "$VRAM" serve --check --config "$T/check.conf"
expect_match "a model file its user may not read: said, with the fix" "$RC $OUT" \
    "^0 .*model m runs as vram-model, who cannot read its model file \($T/secret.gguf, Permission denied\): it will fail to start; let that user read it"

# ---- a model whose user cannot read libvramcap is never run without it ----
# (the loader would skip it without a word: no cap, no fast swap)
mkdir -p "$T/priv"
cp "$SHIM" "$T/priv/libvramcap.so"
chmod 700 "$T/priv"
{ check_head; printf '\n[model capped]\ncommand = %s/testmodel-iso --bytes 16M\nvram = 100M\ncap = yes\n' "$T"; } \
    >"$T/check.conf"
run env VRAM_SHIM="$T/priv/libvramcap.so" "$VRAM" serve --check --config "$T/check.conf"
expect_match "--check: its user cannot read libvramcap: refused, with the fix" "$RC $OUT" \
    "^1 .*model capped runs as vram-model, who cannot read libvramcap \($T/priv/libvramcap.so: Permission denied\): its cap and fast swap would be lost"
chmod 755 "$T/priv"
VRAM_SHIM="$T/priv/libvramcap.so" "$VRAM" serve --config "$T/check.conf" >"$T/serve-c.log" 2>&1 &
C=$!
JOBS="$JOBS $C"
wait_for 20 "$VRAM" ps --socket "$T/check.sock" >/dev/null 2>&1 || not_ok "the second daemon starts" "$(cat "$T/serve-c.log")"
chmod 700 "$T/priv" # taken away after the daemon's check: the model's own process checks again
run "$VRAM" load capped --socket "$T/check.sock" --timeout 20s
expect_match "a start whose user cannot read libvramcap fails, and says so" "$RC $OUT" \
    "^1 .*exited with status 122 \(not run: not as its user\)"
expect_match "its log says why" "$(cat "$T/check-logs/capped.log" 2>&1)" \
    "vram serve: user vram-model cannot read libvramcap \($T/priv/libvramcap.so\): the model would run without its cap and fast swap, so it is not started"
kill -TERM $C 2>/dev/null
wait $C 2>/dev/null

# ---- under a user's daemon: the models are that user's, and still apart ----
. "$(dirname "$0")/users.sh"
kill -TERM $D 2>/dev/null
wait $D 2>/dev/null
if make_users; then
    cp "$T/testmodel-iso" "$T/hostile.py" "$T/bin/"
    as_a mkdir -p "$T/a/logs"
    { printf '[serve]\nsocket = %s/a/vram.sock\nstate = %s/a/vram.db\nlogs = %s/a/logs\nport_base = %s\n' \
        "$T" "$T" "$T" "$((PORTS + 100))"; model_conf "$T/bin/testmodel-iso" "$T/bin/hostile.py"; } |
        as_a sh -c "cat >'$T/a/vram.conf'"
    export VRAM_SOCKET="$T/a/vram.sock"
    $AS_A "$VRAM" serve --config "$T/a/vram.conf" >"$T/serve-a.log" 2>&1 &
    D=$!
    JOBS="$JOBS $D"
    wait_for 20 as_a "$VRAM" ps >/dev/null 2>&1 || not_ok "$USER_A's daemon starts" "$(cat "$T/serve-a.log")"
    as_a "$VRAM" load victim >/dev/null 2>&1
    as_a "$VRAM" load hostile >/dev/null 2>&1
    field() { as_a "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
    VPID=$(field victim pid)
    HPID=$(field hostile pid)
    HPORT=$(field hostile port)
    expect_eq "a user's daemon is not dumpable: its descriptors are root's alone to list" \
        "$(stat -c %U "/proc/$D/fd")" root
    expect_eq "a user's daemon: its models run as that user" \
        "$(status_of "$VPID" Uid | cut -f2) $(status_of "$HPID" Uid | cut -f2)" "$UID_A $UID_A"
    as_a "$VRAM" suspend victim >/dev/null 2>&1
    attack 4
    expect_eq "a user's daemon: the attack ran as that user" "$(j 4 .uid)" "$UID_A"
    check_round 4 "a user's daemon, the victim suspended"
    as_a "$VRAM" resume victim >/dev/null 2>&1
    expect_eq "a user's daemon: the victim's bytes are intact" "$(checksum)" true
    kill -TERM $D 2>/dev/null
    wait $D 2>/dev/null
else
    echo "# skipped the user's daemon: it needs useradd and setpriv"
fi
finish
