#!/bin/sh
# vram doctor and vram reclaim against the simulated driver: a stopped job
# and a defunct one holding memory are found, the dry run changes nothing,
# --yes gets the memory back; the desktop and other users' jobs are left
# alone; fixtures stand in for /sys.
. "$(dirname "$0")/lib.sh"
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"

run() { OUT=$("$@" 2>&1); RC=$?; }
used() { "$VRAM" status --json | jq '.gpus[0].memory.used'; }
BASE=$(used)

"$SIMALLOC" --bytes 2G --hold >"$T/stopped.out" 2>&1 &
S=$!
"$SIMALLOC" --bytes 1G --zombie >"$T/zombie.out" 2>&1 &
Z=$!
JOBS="$JOBS $S $Z"
wait_ready "$T/stopped.out" "$T/zombie.out"
# stopped_ PID: until the kernel says the process is stopped
stopped_() { wait_for 5 sh -c "ps -o stat= -p $1 | grep -q '^T'"; }
kill -STOP $S
stopped_ $S

run "$VRAM" doctor
expect_eq "doctor: something to do, exit 1" "$RC" 1
expect_match "doctor: the desktop's share, with no other GPU to take it" "$OUT" \
    "GPU 0: the desktop holds 1.60 GiB \(Xorg, gnome-shell\)"
expect_match "doctor: the stopped job and its memory" "$OUT" "pid $S \(simalloc\) is stopped and holds 2.29 GiB"
expect_match "doctor: the defunct job and its memory" "$OUT" "pid $Z \(simalloc\) is defunct and holds 1.29 GiB"
expect_match "doctor: persistence mode" "$OUT" "persistence mode is off"

# an Intel GPU in a fixture /sys: the fix becomes vram headless
mkdir -p "$T/sys/class/drm/card0/device" "$T/sys/class/drm/card1/device" "$T/sys/class/drm/card0-HDMI-A-1"
echo 0x8086 >"$T/sys/class/drm/card0/device/vendor"
echo 0x10de >"$T/sys/class/drm/card1/device/vendor"
run "$VRAM" doctor --sys-root "$T/sys"
expect_match "doctor: with an iGPU, the fix is vram headless" "$OUT" \
    "move the display to the Intel GPU \(card0\): vram headless on"
J=$("$VRAM" doctor --json)
expect_eq "doctor --json: the warnings, by kind" \
    "$(echo "$J" | jq -c '[.findings[] | select(.level == "warning") | .kind] | sort')" \
    '["display","stopped","zombie"]'

# reclaim: the dry run changes nothing
run "$VRAM" reclaim
expect_match "dry run: lists the stopped job and its command" "$OUT" \
    "would stop $S \(simalloc, [a-z]+, stopped\): 2.29 GiB   kill -TERM, kill -CONT, then -KILL"
expect_match "dry run: lists the defunct job" "$OUT" "would stop $Z \(simalloc, [a-z]+, defunct\): 1.29 GiB"
expect_match "dry run: says nothing changed" "$OUT" "dry run: nothing changed; add --yes"
expect_eq "dry run: both jobs are still there" "$(ps -o stat= -p $S | cut -c1)$(ps -o stat= -p $Z | cut -c1)" "TZ"
expect_eq "dry run: the memory is still held" "$(used)" $((BASE + 3 * GiB + 2 * 300 * MiB))
run "$VRAM" reclaim --match 'nothing-like-this'
expect_match "a pattern that matches nothing says so" "$OUT" "no defunct or stopped process matches 'nothing-like-this'"
run "$VRAM" reclaim --user nobody
expect_match "--user narrows: nobody's processes, none here" "$OUT" "no defunct or stopped process of user nobody"
run "$VRAM" reclaim --user "$(id -un)"
expect_match "--user narrows: this user's stopped job is listed" "$OUT" "would stop $S \(simalloc"
run "$VRAM" reclaim --user no-such-user-here
expect_eq "an unknown user: exit 2" "$RC" 2
run "$VRAM" reclaim --bogus
expect_eq "an unknown option: exit 2" "$RC" 2

# another user's stopped job is left alone (unless root asks for all users)
OTHER=0
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$T"
    setpriv --reuid=65534 --regid=65534 --clear-groups "$SIMALLOC" --bytes 512M --hold \
        >"$T/other.out" 2>&1 &
    O=$!
    JOBS="$JOBS $O"
    wait_ready "$T/other.out"
    kill -STOP $O
    stopped_ $O
    run "$VRAM" reclaim --match simalloc
    expect_match "root without --all-users leaves other users' jobs alone" "$OUT" \
        "1 process of other users left alone"
    OTHER=$((512 * MiB + 300 * MiB))
fi

# --yes: TERM, grace, KILL; the memory comes back and is measured
run "$VRAM" reclaim --yes --grace 1 --match simalloc
expect_match "--yes stops them and measures what came back" "$OUT" "freed 3.59 GiB"
wait_for 5 sh -c "case \$(ps -o stat= -p $S) in '' | Z*) exit 0 ;; *) exit 1 ;; esac"
ST=$(ps -o stat= -p $S | cut -c1)
case "$ST" in "" | Z) ok "the stopped job is gone" ;; *) not_ok "the stopped job is gone" "$ST" ;; esac
expect_eq "vram status shows the memory back (but the other user's)" "$(used)" $((BASE + OTHER))
expect_match "the desktop was not touched" "$("$VRAM" status)" "desktop / display    1.60 GiB"

# --idle: a job that holds memory and does nothing, next to one that works
"$SIMALLOC" --bytes 1G --hold >"$T/idle.out" 2>&1 &
I=$!
"$SIMALLOC" --bytes 1G --hold --busy >"$T/busy.out" 2>&1 &
B=$!
JOBS="$JOBS $I $B"
wait_ready "$T/idle.out" "$T/busy.out"
sleep 1.2
run "$VRAM" doctor --idle 1s
expect_match "doctor --idle: the idle job" "$OUT" "pid $I \(simalloc\) holds 1.29 GiB and did no GPU work for 1s"
expect_match "doctor --idle: its fix" "$OUT" "vram reclaim --idle 1s --match simalloc"
case "$OUT" in *"pid $B "*) not_ok "doctor --idle: the working job is not idle" "$OUT" ;;
*) ok "doctor --idle: the working job is not idle" ;; esac
run "$VRAM" reclaim --idle 1s
expect_match "reclaim --idle: the idle job in the dry run" "$OUT" "would stop $I \(simalloc, [a-z]+, idle\): 1.29 GiB"
case "$OUT" in *"$B"*) not_ok "reclaim --idle: the working job is left" "$OUT" ;;
*) ok "reclaim --idle: the working job is left" ;; esac
run "$VRAM" reclaim --idle 1s --yes --grace 1 --match simalloc
expect_match "reclaim --idle --yes frees the idle job's memory" "$OUT" "freed 1.29 GiB"
expect_eq "the working job still runs" "$(kill -0 $B 2>/dev/null && echo yes)" yes
run "$VRAM" reclaim --idle 0
expect_eq "--idle 0: exit 2" "$RC" 2
expect_match "--idle 0: says what it wants" "$OUT" "a duration from 1s to 24h"
run "$VRAM" doctor --idle soon
expect_eq "doctor --idle soon: exit 2" "$RC" 2

finish
