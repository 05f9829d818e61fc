#!/bin/sh
# Slices on a shared machine (issue 17, items 1 to 4), as two unprivileged
# users this test makes (users.sh): B attacks, A's commands must finish
# (within `timeout 5`: a hang is the failure, the time is only reported)
# and answer as if the attack were not there.
#   1. a forged group file anyone may write, promising 15G, its lock held:
#      ignored, and no reader waits on it; a FIFO, a flood of files, a file
#      naming A's process as its member: nobody blocks, nothing is believed
#   2. vram-run.lock held by B with flock: no one takes it any more
#   3. B's 10G slice is seen by A's admission (and named in the refusal);
#      A and B starting 10G runs at the same instant never both get one
#   4. a process joining A's full group is refused before the driver holds
#      its context: the driver's sum, sampled, never passes the cap
# Runs as root (CI does); skipped otherwise.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/users.sh"
: "${GROUPFORGE:?}" "${LEDGERSUM:?}" "${TESTMODEL:?}"
if ! users_ok; then
    echo "1..0 # SKIP needs root, useradd and setpriv to make two users"
    exit 77
fi
user_make a || { not_ok "useradd"; finish; exit 1; }
GA=$USER_MADE
user_make b || { not_ok "useradd"; finish; exit 1; }
GB=$USER_MADE

# the build's binaries, where both users can run them whatever the modes
# of the build tree (the copies are the same files; an ASan build needs
# only the system's runtime)
chmod 755 "$T"
BIN="$T/bin"
mkdir -p "$BIN/sim" "$T/home"
cp "$VRAM" "$SHIM" "$SIMALLOC" "$GROUPFORGE" "$LEDGERSUM" "$BIN/"
cp "$(dirname "$VRAM")/sim/libcuda.so.1" "$(dirname "$VRAM")/sim/libnvidia-ml.so.1" "$BIN/sim/"
cp "$WS" "$T/machine.json"
chmod -R a+rX "$BIN" "$T/machine.json" "$T/home"
V="$BIN/vram"
# a shared folder as /dev/shm is: world-writable, sticky
RUN="$T/run"
mkdir -m 1777 "$RUN"
export VRAM_RUN_DIR="$RUN" VRAM_SIM="$T/machine.json" LD_LIBRARY_PATH="$BIN/sim" HOME="$T/home"
UUID=GPU-3f1c2a9e-5070-4d1a-9a61-0c0ffee05070
"$V" status >/dev/null # the simulated driver's ledger, for everyone (0666)

as() { # USER CMD...: CMD as USER, this environment kept
    _u=$1
    shift
    setpriv --reuid="$_u" --regid="$(id -g "$_u")" --clear-groups "$@"
}
# victim NAME CMD...: CMD as A under timeout 5; OUT, RC
victim() {
    _name=$1
    shift
    _t0=$(date +%s%N)
    OUT=$(timeout 5 setpriv --reuid="$GA" --regid="$(id -g "$GA")" --clear-groups "$@" 2>&1)
    RC=$?
    echo "# $_name: $((($(date +%s%N) - _t0) / 1000000)) ms"
    [ "$RC" != 124 ] && ok "$_name: finishes" || not_ok "$_name: finishes" "still running after 5 s"
}
bg_as() { # NAME USER CMD...: in the background, output to $T/NAME.out; BG its pid
    _n=$1
    _u=$2
    shift 2
    setpriv --reuid="$_u" --regid="$(id -g "$_u")" --clear-groups "$@" >"$T/$_n.out" 2>&1 </dev/null &
    BG=$!
    JOBS="$JOBS $BG"
}

# what A sees with no attack, to compare with
DOCTOR_RC=$(as "$GA" "$V" doctor >/dev/null 2>&1; echo $?)
RECLAIM_RC=$(as "$GA" "$V" reclaim >/dev/null 2>&1; echo $?)

# 1. B's forged group file: anyone may write it, it promises 15G, B holds
# its lock
bg_as forge "$GB" "$BIN/groupforge" "$RUN/vram-group-forged" 15G $UUID --mode 0666 --hold
wait_for 5 grep -q holding "$T/forge.out" || not_ok "the forger holds the lock" "$(cat "$T/forge.out")"
FORGER=$BG
victim "1: status with a forged, locked group file" "$V" status
expect_match "1: status answers" "$OUT" "GPU 0 +NVIDIA GeForce RTX 5070 Ti"
victim "1: status --json" "$V" status --json
expect_eq "1: status --json answers" "$(echo "$OUT" | jq '.gpus | length')" 1
victim "1: doctor" "$V" doctor
expect_eq "1: doctor answers as without the file" "$RC" "$DOCTOR_RC"
victim "1: reclaim" "$V" reclaim
expect_eq "1: reclaim answers as without the file" "$RC" "$RECLAIM_RC"
victim "1: run --vram 10G" "$V" run --quiet --vram 10G -- true
expect_eq "1: the forged 15G promise is not believed: A's 10G run is admitted" "$RC" 0
# root's daemon samples the group files every second
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 15G

[model idle]
command = $TESTMODEL --bytes 1M
vram = 1G
CONF
VRAM_SOCKET="$T/vram.sock" "$V" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
wait_for 5 sh -c "VRAM_SOCKET='$T/vram.sock' '$V' ps >/dev/null 2>&1" ||
    not_ok "the daemon started" "$(cat "$T/serve.log")"
sleep 1.5 # two of its ticks, each a sample of the group files
OUT=$(VRAM_SOCKET="$T/vram.sock" timeout 5 "$V" ps 2>&1)
RC=$?
expect_eq "1: root's daemon still answers (vram ps)" "$RC" 0
kill "$DAEMON"
wait "$DAEMON" 2>/dev/null
kill "$FORGER"
wait "$FORGER" 2>/dev/null
rm -f "$RUN/vram-group-forged"

# the same file as B's own (0644), its lock held: still no reader waits;
# B's live promise counts as B's (a slice is a promise), and the refusal
# says whose it is
bg_as forge2 "$GB" "$BIN/groupforge" "$RUN/vram-group-mine" 15G $UUID --hold
wait_for 5 grep -q holding "$T/forge2.out" || not_ok "the forger holds the lock" "$(cat "$T/forge2.out")"
FORGER=$BG
victim "1: status with B's own locked group file" "$V" status
expect_match "1: status answers" "$OUT" "GPU 0 +NVIDIA GeForce RTX 5070 Ti"
victim "1: run --vram 10G beside B's 15G promise" "$V" run --quiet --vram 10G -- true
expect_eq "1: refused (exit 1)" "$RC" 1
expect_match "1: naming the user who holds the promise" "$OUT" \
    "no GPU has room: .*the largest promise there: 15.0 GiB, user $GB's"
kill "$FORGER"
wait "$FORGER" 2>/dev/null
# once its maker is gone, the file is no promise: B's leftover blocks no one
victim "1: run --vram 10G beside B's dead file" "$V" run --quiet --vram 10G -- true
expect_eq "1: B's file without its maker counts for nothing" "$RC" 0
expect_eq "1: and A cannot remove it, nor needs to" "$(ls "$RUN" | grep -c vram-group-mine)" 1

# a FIFO, a flood of files, a file naming A's process as its member
as "$GB" mkfifo "$RUN/vram-group-fifo"
as "$GB" sh -c "i=0; while [ \$i -lt 300 ]; do cat '$RUN/vram-group-mine' >'$RUN/vram-group-flood-'\$i; i=\$((i + 1)); done"
bg_as held "$GA" "$V" run --quiet --vram 4G -- "$BIN/simalloc" --bytes 256M --hold
wait_for 5 grep -q '^ready' "$T/held.out" || not_ok "A's job started" "$(cat "$T/held.out")"
HELD=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/held.out")
as "$GB" "$BIN/groupforge" "$RUN/vram-group-claims-a" 1G $UUID --member "$HELD"
victim "1: status with a FIFO and 300 more files" "$V" status --json
expect_eq "1: A's process keeps A's slice, not the one B's file claims for it" \
    "$(echo "$OUT" | jq ".gpus[0].processes[] | select(.pid == $HELD) | .cap")" $((4 * GiB))
victim "1: run beside the FIFO and the flood" "$V" run --quiet --vram 1G -- true
expect_eq "1: admitted" "$RC" 0
kill "$HELD"
rm -f "$RUN"/vram-group-flood-* "$RUN/vram-group-fifo" "$RUN/vram-group-claims-a" "$RUN/vram-group-mine"

# 2. vram-run.lock, made for every user (0666) as vram run used to make it,
# held by B with flock
: >"$RUN/vram-run.lock"
chmod 666 "$RUN/vram-run.lock"
bg_as flock "$GB" sh -c "exec 3<>'$RUN/vram-run.lock'; flock 3; echo held; exec sleep 600"
wait_for 5 grep -q held "$T/flock.out" || not_ok "B holds the lock" "$(cat "$T/flock.out")"
LOCKER=$BG
victim "2: run while B holds vram-run.lock" "$V" run --quiet --vram 1G -- true
expect_eq "2: A's run is not held up" "$RC" 0
OUT=$(timeout 5 "$V" run --quiet --vram 1G -- true 2>&1)
expect_eq "2: nor is root's" "$?" 0
kill "$LOCKER"
rm -f "$RUN/vram-run.lock"

# 3. B's 10G slice, before it allocates much: a promise A's admission sees
bg_as b10 "$GB" "$V" run --quiet --vram 10G -- "$BIN/simalloc" --bytes 256M --hold
wait_for 5 grep -q '^ready' "$T/b10.out" || not_ok "B's job started" "$(cat "$T/b10.out")"
BJOB=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/b10.out")
victim "3: run --vram 10G beside B's 10G slice" "$V" run --vram 10G -- true
expect_eq "3: refused (exit 1): the same memory is not promised twice" "$RC" 1
expect_match "3: and says whose promise is in the way" "$OUT" \
    "no GPU has room: 10.0 GiB free.*user $GB's \(vram run [0-9]+\)"
victim "3: status" "$V" status --json
expect_eq "3: A sees B's slice" \
    "$(echo "$OUT" | jq ".gpus[0].processes[] | select(.pid == $BJOB) | .cap")" $((10 * GiB))
kill "$BJOB"
wait_for 5 sh -c "[ -z \"\$(ls '$RUN' | grep vram-group)\" ]" || not_ok "B's slice ended"
victim "3: run --vram 10G once B's job ended" "$V" run --quiet --vram 10G -- true
expect_eq "3: admitted" "$RC" 0

# A and B at the same instant, 10G each on a GPU with room for one
BOTH=0
ONE=0
for i in $(seq 1 10); do
    RACE="while [ ! -e '$T/go$i' ]; do :; done
        exec '$V' run --quiet --vram 10G -- sh -c 'echo ran; sleep 0.5'"
    bg_as "race${i}a" "$GA" sh -c "$RACE"
    PA=$BG
    bg_as "race${i}b" "$GB" sh -c "$RACE"
    PB=$BG
    touch "$T/go$i"
    wait "$PA" "$PB" 2>/dev/null
    N=$(cat "$T/race${i}a.out" "$T/race${i}b.out" | grep -c '^ran')
    [ "$N" -eq 2 ] && BOTH=$((BOTH + 1))
    [ "$N" -eq 1 ] && ONE=$((ONE + 1))
done
echo "# 10 races: one admitted in $ONE, both in $BOTH"
expect_eq "3: A and B deciding at once are never both given the same 10G" "$BOTH" 0
[ "$ONE" -gt 0 ] && ok "3: and one of them is ($ONE of 10 races)" ||
    not_ok "3: one of them is admitted" "$(cat "$T"/race*.out)"

# 4. A's group is full; processes joining it are refused before the driver
# holds their contexts
mkdir -p "$T/a"
chown "$GA" "$T/a"
"$BIN/ledgersum" "$T/machine.json" 0 1G "$T/stop4" >"$T/sum4.out" 2>&1 &
SAMPLER=$!
JOBS="$JOBS $SAMPLER"
wait_for 5 grep -qs '^sampling' "$T/sum4.out" || not_ok "the sampler started"
OUT=$(timeout 60 setpriv --reuid="$GA" --regid="$(id -g "$GA")" --clear-groups "$V" run --quiet --vram 1G -- sh -c "
    '$BIN/simalloc' --bytes 700M --hold >'$T/a/full.out' 2>&1 &
    H=\$!
    while ! grep -q ready '$T/a/full.out'; do sleep 0.05; done
    J=
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
        '$BIN/simalloc' --bytes 2M </dev/null >>'$T/a/join.out' 2>&1 &
        J=\"\$J \$!\"
    done
    wait \$J
    kill \$H" 2>&1)
RC=$?
expect_eq "4: A's full group ran as A" "$RC" 0
[ "$RC" = 0 ] || echo "$OUT" "$(cat "$T/a/full.out" "$T/a/join.out" 2>/dev/null)" | sed 's/^/#   /'
touch "$T/stop4"
wait "$SAMPLER"
expect_eq "4: every joiner is refused at its context (out of memory)" \
    "$(grep -c 'CUDA setup failed: 2' "$T/a/join.out")" 20
read -r _ SAMPLES _ OVER _ MAX <<EOS
$(tail -1 "$T/sum4.out")
EOS
echo "# $SAMPLES samples of the driver's sum, the most $MAX"
expect_eq "4: no sample of the driver's sum over the 1 GiB cap" "${OVER:-x}" 0

finish
