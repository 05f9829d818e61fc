#!/bin/sh
# vram top in a real terminal (tmux), at 80x24 and 200x60: the screen shows
# the GPUs, the bar, the meters, the processes and their columns; keys
# sort by any column either way, filter, nest the tree, open the details
# pane (with a capped job's slice and a served model's state from its
# daemon), suspend and resume a job and a model, signal and stop after a
# y, and quit; another user may signal, suspend or stop nothing of root's;
# eight GPUs fit on 80x24. Every wait is for what the screen shows.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
command -v tmux >/dev/null || { not_ok "tmux is installed"; finish; exit 1; }
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
S="vramtest$$"
export TMUX_TMPDIR="$T"
export LANG=C.UTF-8
# no configuration but tmux's own (a status line of one's ~/.tmux.conf or
# /etc/tmux.conf would take a row of the 80x24 screen): the server reads
# it when it starts, with the first session
tmux() { command tmux -f /dev/null "$@"; }

screen() { tmux capture-pane -p -t "$S"; }
# wait_for PATTERN: until the screen shows it (30 s at most: the wait ends
# with the screen, a loaded machine may take long to start vram top)
wait_for() {
    for _ in $(seq 1 300); do
        _screen=$(screen 2>&1) || break # no session: vram top ended
        printf '%s\n' "$_screen" | grep -Eq -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
check_screen() {
    if wait_for "$2"; then ok "$1"; else not_ok "$1" "no /$2/ on screen:" "$(screen)"; fi
}
keys() { tmux send-keys -t "$S" "$@"; }
first_row() { screen | sed -n '/^ *PID USER/{n;p;q}'; }
first_is() { for _ in $(seq 1 300); do first_row | grep -Eq -- "$1" && return 0; sleep 0.1; done; return 1; }
check_first() { if first_is "$2"; then ok "$1"; else not_ok "$1" "first row not /$2/:" "$(screen)"; fi; }
# quit: until the session ends with vram top, and none of that name is left
# for the next (a fixed pause was not always enough: "duplicate session")
quit() {
    keys q
    for _ in $(seq 1 300); do tmux has-session -t "$S" 2>/dev/null || return 0; sleep 0.1; done
    tmux kill-session -t "$S" 2>/dev/null
    return 1
}
ME=$(id -un)

start_job job --bytes 2G || not_ok "job started"
JOB=$JOB_PID
# a job under vram run's cap, for the details pane
"$VRAM" run --vram 4G -- "$SIMALLOC" --bytes 1G --hold >"$T/capped.out" 2>&1 </dev/null &
JOBS="$JOBS $!"
wait_ready "$T/capped.out"
CAPPED=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/capped.out")
JOBS="$JOBS $CAPPED"

tmux new-session -d -s "$S" -x 80 -y 24 \
    "env VRAM_SIM='$WS' VRAM_SIM_STATE='$VRAM_SIM_STATE' '$VRAM' top --interval 0.2"
check_screen "header" '^vram top +sort vram +every 0\.2s +driver 580\.95\.05'
check_screen "the GPU line with used/total" '^0 +RTX 5070 Ti +5\.7/16\.0 +GiB \[rdd'
check_screen "the bar shows workloads and free" '\[r+d+w+u*\.+\]'
check_screen "the breakdown line" 'reserved 0\.45  display 1\.60  work 3\.59  other 0\.00  unattributed 0\.05 GiB'
check_screen "the meters: utilization, memory bandwidth, temperature, power" \
    '^   GPU   0% .* MBW   0% .* 38C  24/300 W'
check_screen "... clocks, PCIe, the video engines on the next line" \
    '^   SM 180/3090 MHz  MEM 405 MHz  PCIe rx 0 KB/s tx 0 KB/s  ENC 0%  DEC 0%'
check_screen "80 columns: the columns that fit" '^ +PID USER +GPU +VRAM +SM% +CPU% +RSS +TIME COMMAND$'
check_screen "Xorg: no user, CPU or RSS from /proc" '^4194401 \? +0 +1\.10 GiB +0 +- +- +- /usr/lib/xorg/Xorg'
check_screen "the job: its user, VRAM, CPU %, RSS, running time" \
    "^ *$JOB $ME +0 +2\.29 GiB +0 +[0-9]+\.[0-9] +[0-9.]+ [KM]iB +[0-9]+:[0-9]{2} /"
check_screen "the history says its span and scale, over its column" '^vram top .* +2\.4s, 0-100%$'

# sorting: by the next column, back, the other way round
keys s
check_screen "s sorts by the next column (SM%)" 'sort sm'
keys '<'
check_screen "< goes back to VRAM" 'sort vram  every'
check_first "the largest first" "^ *$JOB "
keys S
check_screen "S reverses the sort" 'sort vram \(reversed\)'
check_first "the smallest first" '^ *4194402 .*gnome-she'
keys S
check_first "S again: the largest first" "^ *$JOB "

# ? shows the keys, any key goes back
keys '?'
check_screen "? shows the help" 'S  reverse the sort'
check_screen "the help explains the history" 'the history: .*a column a sample'
keys x
check_screen "any key goes back to the processes" "^ *$JOB "

# the filter, typed: only what it matches, then every process again
keys / 'name:simalloc' Enter
check_screen "/ filters: the header says how many match" "filter 'name:simalloc' 2/4"
if screen | grep -q '^4194401 '; then not_ok "the filter hides Xorg" "$(screen)"; else ok "the filter hides Xorg"; fi
keys / C-u 'gpu:x' Enter
check_screen "a filter that does not parse says why" "'x': gpu: takes a number"
keys C-u Enter
check_screen "an empty filter: every process" 'every process'
check_screen "... Xorg is back" '^4194401 '

# the details pane: the capped job's slice, its cgroup, its command line
keys / "pid:$CAPPED" Enter
check_screen "the capped job alone" "filter 'pid:$CAPPED' 1/4"
keys Enter
check_screen "Enter opens the details: who" "^ pid $CAPPED  simalloc  user $ME"
check_screen "... its whole command line" "^ command +$SIMALLOC --bytes 1G --hold"
check_screen "... its slice under vram run" '^ vram run capped: 1\.29 GiB counted of a 4\.00 GiB slice'
check_screen "... its cgroup" '^ cgroup +/'
check_screen "... no model" '^ model +no model of vram serve'
keys Escape
for _ in $(seq 1 50); do screen | grep -q '^ vram run' || break; sleep 0.1; done
screen | grep -q '^ vram run' && not_ok "Esc closes the details" "$(screen)" || ok "Esc closes the details"
keys / C-u "pid:$JOB" Enter
check_first "the job alone" "^ *$JOB "

# suspend and resume the job from top: the commands' own words
keys p
check_screen "p suspends it (vram suspend)" "vram suspend $JOB: suspended pid $JOB \(driver path\)"
check_screen "... it stays listed, suspended, holding no VRAM" "^ *$JOB $ME +0 +- .*\[suspended\] /"
check_screen "... its memory left the bar" '^0 +RTX 5070 Ti +3\.4/16\.0 +GiB'
keys r
check_screen "r resumes it (vram resume)" "vram resume $JOB: resumed pid $JOB on GPU 0"
check_screen "... its memory is back" '^0 +RTX 5070 Ti +5\.7/16\.0 +GiB'
tmux kill-session -t "$S"

# the tree, and signals after a y
tmux new-session -d -s "$S" -x 80 -y 24 \
    "env VRAM_SIM='$WS' VRAM_SIM_STATE='$VRAM_SIM_STATE' '$VRAM' top --interval 0.2 --filter pid:$JOB"
check_first "the job is back on its GPU" "^ *$JOB "
keys v
check_screen "v: the tree" 'tree: children under their parents'
keys t
check_screen "t asks for confirmation" "send TERM to $JOB \(simalloc\)\? y/n"
keys n
check_screen "n does nothing" 'nothing done'
kill -0 $JOB 2>/dev/null && ok "the job still runs after n" || not_ok "the job still runs after n"
keys x
check_screen "x asks too" "stop $JOB \(simalloc\) with TERM\? y/n"
keys y
check_screen "y sends TERM" "sent TERM to $JOB"
for _ in $(seq 1 300); do kill -0 $JOB 2>/dev/null || break; sleep 0.1; done
kill -0 $JOB 2>/dev/null && not_ok "the job ended" || ok "the job ended"
keys / C-u Enter
check_screen "its memory is back on the bar" '^0 +RTX 5070 Ti +3\.4/16\.0 +GiB'
quit && ok "q quits" || not_ok "q quits"

# another user's top may not signal, suspend or stop root's job
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$T"
    start_job rootjob --bytes 1G || not_ok "root's job started"
    R=$JOB_PID
    tmux new-session -d -s "$S" -x 80 -y 24 \
        "setpriv --reuid=65534 --regid=65534 --clear-groups env LANG=C.UTF-8 VRAM_SIM='$WS' \
         VRAM_SIM_STATE='$VRAM_SIM_STATE' VRAM_RUN_DIR='$T' '$VRAM' top --interval 0.2 --filter pid:$R"
    check_screen "nobody's top shows root's job" "^ *$R root +0 +1\.29 GiB"
    keys t
    wait_for 'y/n' >/dev/null
    keys y
    check_screen "and refuses to signal it" "pid $R belongs to root: only root signals"
    keys p
    check_screen "and vram suspend, run from top, refuses too" "vram suspend $R: vram suspend: "
    kill -0 $R 2>/dev/null && ok "root's job still runs" || not_ok "root's job still runs"
    "$VRAM" status --json | jq -e ".gpus[0].processes[] | select(.pid == $R) | .used > 0" >/dev/null &&
        ok "and still holds its memory" || not_ok "and still holds its memory"
    quit || not_ok "q quits nobody's top"
fi

# 200x60: every column and the meters on one line
tmux new-session -d -s "$S" -x 200 -y 60 \
    "env VRAM_SIM='$SRC/tests/fixtures/machines/top-meters.json' VRAM_SIM_STATE='$T/ledger2' '$VRAM' top --interval 0.2"
check_screen "200x60: every column" \
    '^ +PID USER +GPU ROLE +TYPE +VRAM +SM% MBW% ENC% DEC% +CPU% +RSS +TIME STATE +COMMAND$'
check_screen "200x60: the meters on one line, with their graphs" \
    '^   GPU  87% .*[▁▂▃▄▅▆▇█]+  MBW  41% .* 71C  245/300 W .* SM 2505/3105 MHz  MEM 10001 MHz  PCIe rx 1\.2 GB/s tx 350 MB/s  ENC 12%  DEC 3%'
check_screen "200x60: a process's share of each engine" \
    '^4194601 \? +0 workload compute +2\.00 GiB +55 +30 +12 +3 '
check_screen "200x60: the history over its column" 'used memory, last 6s, 0-100%$'
keys '>' '>' '>' '>' '>'
check_screen "> five times: sorted by CPU" 'sort cpu'
W=$(screen | wc -L)
[ "$W" -le 200 ] && ok "nothing drawn past 200 columns" || not_ok "nothing past 200 columns" "$W"
quit

# eight GPUs on 80x24: all of them, and room for the process list
tmux new-session -d -s "$S" -x 80 -y 24 \
    "env VRAM_SIM='$SRV' VRAM_SIM_STATE='$VRAM_SIM_STATE' '$VRAM' top"
check_screen "8 GPUs: the last one is shown" '^7 +H200 +0\.6/140\.4 +GiB'
check_screen "8 GPUs: GPU 2's job is on screen" '^4194500 \? +2 +71\.0 GiB'
W=$(screen | wc -L)
[ "$W" -le 80 ] && ok "nothing drawn past 80 columns" || not_ok "nothing past 80 columns" "$W"
quit

# a model of vram serve: its state from the daemon, suspended, resumed and
# stopped from top through the daemon (vram suspend/resume/unload MODEL)
export VRAM_SOCKET="$T/vram.sock" VRAM_CONFIG="$T/vram.conf"
PORTS=$((10000 + ($$ * 13) % 20000))
cp "$TESTMODEL" "$T/testmodel-top"
{
    serve_head
    cat <<CONF

[model m]
command = $T/testmodel-top --bytes 512M
vram = 1G
gpu = 0
swap = driver
keep_alive = forever
CONF
} >"$T/vram.conf"
"$VRAM" serve >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
if "$VRAM" load m >"$T/load.out" 2>&1 || { sleep 1; "$VRAM" load m >"$T/load.out" 2>&1; }; then
    M=$("$VRAM" ps --json | jq -r '.models[0].pid')
    tmux new-session -d -s "$S" -x 100 -y 30 \
        "env VRAM_SIM='$WS' VRAM_SIM_STATE='$VRAM_SIM_STATE' VRAM_SOCKET='$VRAM_SOCKET' \
         VRAM_CONFIG='$VRAM_CONFIG' '$VRAM' top --interval 0.2 --filter model:m"
    check_first "--filter model:m: the model's process" "^ *$M "
    keys Enter
    check_screen "the details: the model's state, from its daemon" '^ model +m of vram serve: ready on GPU 0'
    keys p
    check_screen "p suspends the model through its daemon" 'vram suspend m: m: suspended'
    check_screen "... its process stays listed, on no GPU" "^ *$M .*\[model m, on no GPU\]"
    keys r
    check_screen "r resumes the model" 'vram resume m: m: ready on GPU 0'
    # (as root, the daemon runs it as vram-model, not as the test's user)
    MU=$(ps -o user= -p "$M" | tr -d ' ' | cut -c1-8) # the column's width
    check_first "... its process on its GPU again" "^ *$M $MU +0 workload compute +[0-9.]+ [MG]iB"
    keys x
    check_screen "x asks before a model stops" 'stop model m of vram serve \(vram unload\)\? y/n'
    keys y
    check_screen "y unloads it through its daemon" 'vram unload m: m: (stopping|stopped)'
    quit
else
    not_ok "the daemon loads its model" "$(cat "$T/load.out" "$T/serve.log")"
fi
kill -TERM $DAEMON 2>/dev/null
wait $DAEMON 2>/dev/null
tmux kill-server 2>/dev/null
finish
