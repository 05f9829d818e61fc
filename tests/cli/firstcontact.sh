#!/bin/sh
# What a user meets first, against the simulated workstation: colour only
# where it helps (a terminal, unless NO_COLOR; --color=always|never win),
# in status, doctor and top; --json with a schema version for doctor and
# reclaim (ps's is in service.sh); the manual behind vram help.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || { not_ok "script(1) is installed (bsdutils)"; finish; exit 1; }
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
unset NO_COLOR
export TERM=xterm

run() { OUT=$("$@" 2>&1); RC=$?; }
ESC=$(printf '\033')
# on_tty CMD...: CMD's output, run on a pseudo-terminal
on_tty() { script -qec "$*" /dev/null 2>&1; }
colored() { case $1 in *"$ESC["*) echo colour ;; *) echo plain ;; esac; }

run "$VRAM" status
expect_eq "status into a pipe: no colour" "$(colored "$OUT")" plain
expect_eq "status on a terminal: colour" "$(colored "$(on_tty "$VRAM" status)")" colour
expect_match "each part has its colour on a terminal (workloads green)" "$(on_tty "$VRAM" status)" \
    "$ESC\[32mworkloads"
expect_eq "NO_COLOR on a terminal: none" "$(colored "$(on_tty env NO_COLOR=1 "$VRAM" status)")" plain
expect_eq "NO_COLOR empty counts as unset" "$(colored "$(on_tty env NO_COLOR= "$VRAM" status)")" colour
expect_eq "TERM=dumb: none" "$(colored "$(on_tty env TERM=dumb "$VRAM" status)")" plain
expect_eq "--color=never on a terminal: none" "$(colored "$(on_tty "$VRAM" status --color=never)")" plain
run env NO_COLOR=1 "$VRAM" status --color always
expect_eq "--color always beats NO_COLOR, into a pipe too" "$(colored "$OUT")" colour
run "$VRAM" --color=always status
expect_eq "--color before the command works as well" "$(colored "$OUT")" colour
run "$VRAM" status --color=sometimes
expect_eq "--color with a bad value: exit 2" "$RC" 2
expect_match "and says which values there are" "$OUT" "--color 'sometimes': auto, always or never"
run "$VRAM" status --color=never
expect_eq "without colour the text is what it was" "$OUT" "$("$VRAM" status 2>&1)"
run "$VRAM" status --json --color=always
expect_eq "JSON is never coloured" "$(colored "$OUT")" plain
expect_eq "status --json: schema 1, the driver's versions (CUDA's read from libcuda)" \
    "$(printf '%s' "$OUT" | jq -c '[.schema, .driver.version, .driver.cuda_version]')" '[1,"580.95.05",13000]'

run "$VRAM" doctor --color=always
expect_match "doctor --color=always: the warnings' mark in colour" "$OUT" "$ESC\[1;33m!$ESC\[0m GPU 0"
run "$VRAM" doctor
expect_eq "doctor into a pipe: no colour" "$(colored "$OUT")" plain
expect_eq "doctor with NO_COLOR on a terminal: none" \
    "$(colored "$(on_tty env NO_COLOR=1 "$VRAM" doctor)")" plain

# top: ncurses colours unless NO_COLOR or --color=never (tmux shows them)
if command -v tmux >/dev/null; then
    export TMUX_TMPDIR="$T"
    S="vramfc$$"
    top_screen() {
        tmux new-session -d -s "$S" -x 80 -y 24 "env $1 VRAM_SIM='$WS' VRAM_SIM_STATE='$VRAM_SIM_STATE' '$VRAM' top --interval 0.2 $2"
        for _ in $(seq 1 50); do
            tmux capture-pane -p -t "$S" | grep -q 'RTX 5070' && break
            sleep 0.1
        done
        tmux capture-pane -e -p -t "$S"
        tmux kill-session -t "$S"
    }
    # a colour is an SGR code 30-37 or 40-47 (bold and reverse are not)
    hues() { printf '%s' "$1" | grep -Eq "$ESC\[([0-9]*;)*[34][0-7](;[0-9]*)*m" && echo colour || echo plain; }
    expect_eq "top on a terminal: colour" "$(hues "$(top_screen "" "")")" colour
    expect_eq "top with NO_COLOR: none" "$(hues "$(top_screen NO_COLOR=1 "")")" plain
    expect_eq "top --color=never: none" "$(hues "$(top_screen "" --color=never)")" plain
fi

# --json of doctor and reclaim: documented, versioned
"$SIMALLOC" --bytes 1G --hold >"$T/stopped.out" 2>&1 &
S=$!
JOBS="$JOBS $S"
wait_ready "$T/stopped.out"
kill -STOP $S
run "$VRAM" doctor --json
expect_eq "doctor --json: schema 1" "$(printf '%s' "$OUT" | jq .schema)" 1
expect_eq "doctor --json: the stopped job is a finding" \
    "$(printf '%s' "$OUT" | jq -c "[.findings[] | select(.pid == $S) | [.kind, .level]]")" '[["stopped","warning"]]'
expect_eq "doctor --json: warnings counted" "$(printf '%s' "$OUT" | jq '.warnings == ([.findings[] | select(.level == "warning")] | length)')" true
run "$VRAM" reclaim --json
expect_eq "reclaim --json: schema 1, a dry run" "$(printf '%s' "$OUT" | jq -c '[.schema, .dry_run, .freed]')" '[1,true,null]'
expect_eq "reclaim --json: the target, why, and what would be done" \
    "$(printf '%s' "$OUT" | jq -c "[.targets[] | select(.pid == $S) | [.reason, .action, .bytes > 0]]")" \
    '[["stopped","would_stop",true]]'
expect_eq "the dry run left it alone" "$(kill -0 $S 2>/dev/null && echo alive)" alive
run "$VRAM" reclaim --json --yes --grace 1
expect_eq "reclaim --json --yes: stopped, memory freed" \
    "$(printf '%s' "$OUT" | jq -c "[.dry_run, ([.targets[] | select(.pid == $S) | .action] | .[0]), .freed > 0, .used_before - .used_after == .freed]")" \
    '[false,"stopped",true,true]'
expect_eq "and nothing else on stdout: one JSON document" "$(printf '%s' "$OUT" | jq -s length)" 1

# vram help: the manual pages, built in
if [ "${MAN_PAGES:-0}" -gt 0 ]; then
    run "$VRAM" help status
    expect_match "vram help status is the manual page" "$OUT" "^vram-status\(1\) +General Commands Manual"
    run "$VRAM" help
    expect_match "vram help alone is vram(1)" "$OUT" "^vram\(1\) "
    run "$VRAM" help vram.conf
    expect_match "vram help vram.conf is the configuration's page" "$OUT" "^vram.conf\(5\) +File Formats Manual"
else
    run "$VRAM" help status
    expect_match "built without scdoc: vram help says so and gives the short help" "$OUT" \
        "not built into this vram.*usage: vram status"
fi
run "$VRAM" help nosuch
expect_eq "vram help of no command: exit 2" "$RC" 2
finish
