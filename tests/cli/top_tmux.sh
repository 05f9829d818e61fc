#!/bin/sh
# vram top in a real terminal (tmux): the screen shows the GPUs, the bar,
# the processes; keys sort, signal after confirmation, and quit; eight GPUs
# fit on 80x24.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { not_ok "tmux is installed"; finish; exit 1; }
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
S="vramtest$$"
export TMUX_TMPDIR="$T"
# no configuration but tmux's own (a status line of one's ~/.tmux.conf or
# /etc/tmux.conf would take a row of the 80x24 screen): the server reads
# it when it starts, with the first session
tmux() { command tmux -f /dev/null "$@"; }

screen() { tmux capture-pane -p -t "$S"; }
# wait_for PATTERN: until the screen shows it (30 s at most: the wait ends
# with the screen, a loaded machine may take long to start vram top)
wait_for() {
    for _ in $(seq 1 300); do
        screen | grep -Eq -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
check_screen() {
    if wait_for "$2"; then ok "$1"; else not_ok "$1" "no /$2/ on screen:" "$(screen)"; fi
}

start_job job --bytes 2G || not_ok "job started"
JOB=$JOB_PID

tmux new-session -d -s "$S" -x 80 -y 24 \
    "env VRAM_SIM='$WS' VRAM_SIM_STATE='$VRAM_SIM_STATE' '$VRAM' top --interval 0.2"
check_screen "header" '^vram top +driver 580\.95\.05'
check_screen "the GPU line with used/total" '^0 +RTX 5070 Ti +4\.4/16\.0 +GiB \[rdd'
check_screen "the bar shows workloads and free" '\[r+d+w+u*\.+\]'
check_screen "the breakdown line" 'reserved 0\.45  display 1\.60  work 2\.29  other 0\.00  unattributed 0\.05 GiB'
check_screen "Xorg listed as display" '4194401 \? +0 display +graphics +1\.10 GiB'
check_screen "the job listed as a workload" "$JOB +[a-z0-9]+ +0 workload compute +2\.29 GiB"
check_screen "the history says its span and scale, over its column" '^vram top .* +2\.4s, 0-100%$'
tmux send-keys -t "$S" s
check_screen "s sorts by pid" 'sort pid'
# S reverses it: the highest pid (Xorg's) first, then back
tmux send-keys -t "$S" S
check_screen "S reverses the sort" 'sort pid \(reversed\)'
first_row() { screen | sed -n '/^ *PID USER/{n;p;q}'; }
first_is() { for _ in $(seq 1 300); do first_row | grep -Eq -- "$1" && return 0; sleep 0.1; done; return 1; }
first_is '^ *4194402 .*gnome-shell' && ok "the highest pid first" || not_ok "the highest pid first" "$(screen)"
tmux send-keys -t "$S" S
first_is "^ *$JOB " && ok "S again: the lowest first" || not_ok "S again: the lowest first" "$(screen)"
# ? shows the keys, any key goes back
tmux send-keys -t "$S" '?'
check_screen "? shows the help" 'S  reverse the sort'
check_screen "the help explains the history" 'the history: .*a column a sample'
tmux send-keys -t "$S" x
check_screen "any key goes back to the processes" "^ *$JOB "

# select the job (lowest pid first now) and ask for TERM; say no, then yes
tmux send-keys -t "$S" t
check_screen "t asks for confirmation" "send TERM to $JOB \(simalloc\)\? y/n"
tmux send-keys -t "$S" n
check_screen "n sends nothing" 'nothing sent'
kill -0 $JOB 2>/dev/null && ok "the job still runs after n" || not_ok "the job still runs after n"
tmux send-keys -t "$S" t
wait_for 'y/n' >/dev/null
tmux send-keys -t "$S" y
check_screen "y sends TERM" "sent TERM to $JOB"
for _ in $(seq 1 300); do kill -0 $JOB 2>/dev/null || break; sleep 0.1; done
kill -0 $JOB 2>/dev/null && not_ok "the job ended" || ok "the job ended"
check_screen "its memory is back on the bar" '^0 +RTX 5070 Ti +2\.1/16\.0 +GiB'
# quit: until the session ends with vram top, and none of that name is left
# for the next (a fixed pause was not always enough: "duplicate session")
quit() {
    tmux send-keys -t "$S" q
    for _ in $(seq 1 300); do tmux has-session -t "$S" 2>/dev/null || return 0; sleep 0.1; done
    tmux kill-session -t "$S" 2>/dev/null
    return 1
}
quit && ok "q quits" || not_ok "q quits"

# another user's top may not signal root's job (only root signals others')
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$T"
    start_job rootjob --bytes 1G || not_ok "root's job started"
    R=$JOB_PID
    tmux new-session -d -s "$S" -x 80 -y 24 \
        "setpriv --reuid=65534 --regid=65534 --clear-groups env VRAM_SIM='$WS' \
         VRAM_SIM_STATE='$VRAM_SIM_STATE' '$VRAM' top --interval 0.2"
    check_screen "nobody's top shows root's job first (largest)" "^ *$R root +0 workload"
    tmux send-keys -t "$S" t
    wait_for 'y/n' >/dev/null
    tmux send-keys -t "$S" y
    check_screen "and refuses to signal it" "pid $R belongs to root: only root signals"
    kill -0 $R 2>/dev/null && ok "root's job still runs" || not_ok "root's job still runs"
    quit || not_ok "q quits nobody's top"
fi

# eight GPUs on 80x24: all of them, and room for the process list
tmux new-session -d -s "$S" -x 80 -y 24 \
    "env VRAM_SIM='$SRV' VRAM_SIM_STATE='$VRAM_SIM_STATE' '$VRAM' top"
check_screen "8 GPUs: the last one is shown" '^7 +H200 +0\.6/140\.4 +GiB'
check_screen "8 GPUs: GPU 2's job is on screen" '4194500 .* workload compute +71\.0 GiB'
W=$(screen | wc -L)
[ "$W" -le 80 ] && ok "nothing drawn past 80 columns" || not_ok "nothing past 80 columns" "$W"
quit || not_ok "q quits the eight GPUs' top"
tmux kill-server 2>/dev/null
finish
