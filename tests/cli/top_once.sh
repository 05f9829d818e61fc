#!/bin/sh
# vram top --once and --json, on the simulated driver: every column and
# meter from the driver (per-process SM, memory bandwidth, encoder,
# decoder; clocks, PCIe, video engines, power against its limit) and from
# the host (CPU %, RSS, running time, user); the tree, the filter, the
# sort; the frame at 80x24 and 200x60; a driver without the calls shows
# "-" and null, never a made-up 0.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export VRAM_SIM="$SRC/tests/fixtures/machines/top-meters.json"
ME=$(id -un)
top_json() { "$VRAM" top --once --json -d 0.3 "$@"; }

# a busy job, and a parent (on no GPU) with two jobs under it
start_job busy --bytes 1G --busy || not_ok "busy job started"
BUSY=$JOB_PID
sh -c "\"$SIMALLOC\" --bytes 512M --hold >\"$T/c1.out\" 2>&1 &
       \"$SIMALLOC\" --bytes 256M --hold >\"$T/c2.out\" 2>&1 & wait" &
PARENT=$!
JOBS="$JOBS $PARENT"
wait_ready "$T/c1.out" "$T/c2.out"
C1=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/c1.out")
C2=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/c2.out")
JOBS="$JOBS $C1 $C2"

J=$(top_json)
g0() { printf '%s\n' "$J" | jq -c ".gpus[0]$1"; }
expect_eq "clocks now" "$(g0 .clocks_mhz)" '{"graphics":2505,"sm":2505,"memory":10001}'
expect_eq "clocks at most" "$(g0 .max_clocks_mhz)" '{"sm":3105,"memory":10001}'
expect_eq "PCIe throughput, each way" "$(g0 .pcie_throughput_kb_s)" '{"tx":350000,"rx":1200000}'
expect_eq "encoder and decoder" "$(g0 '| [.encoder_pct, .decoder_pct]')" '[12,3]'
expect_eq "utilization and memory bandwidth" "$(g0 .utilization)" '{"gpu":87,"memory":41}'
expect_eq "an H100 has no encoder: null" "$(printf '%s\n' "$J" | jq .gpus[1].encoder_pct)" null
proc() { printf '%s\n' "$J" | jq -c "[.gpus[].processes[] | select(.pid == $1)][0]$2"; }
expect_eq "a process's shares: SM, memory, encoder, decoder" "$(proc 4194601 .utilization)" \
    '{"sm":55,"memory":30,"encoder":12,"decoder":3}'
expect_eq "the busy job's share (the driver saw it copy)" "$(proc $BUSY .utilization.sm)" 60
expect_eq "a process the driver has no sample of: 0, not unknown" \
    "$(proc 4194602 .utilization)" '{"sm":0,"memory":0,"encoder":0,"decoder":0}'
expect_match "the busy job's CPU % (two readings an interval apart)" "$(proc $BUSY .cpu_pct)" '^[0-9.]+$'
expect_match "its resident memory" "$(proc $BUSY .rss)" '^[1-9][0-9]{5,}$'
expect_eq "its user" "$(proc $BUSY .user)" "\"$ME\""
expect_eq "a process /proc does not show: no CPU %, no RSS" "$(proc 4194601 '| [.cpu_pct, .rss]')" \
    '[null,null]'

# the list: sorted by VRAM at first, reversed, by pid, by CPU
rows() { printf '%s\n' "$1" | jq -c '[.top.rows[] | .pid]'; }
expect_eq "sorted by VRAM: the H100's 60 GiB first" \
    "$(printf '%s\n' "$J" | jq '.top.rows[0].pid')" 4194603
R=$(top_json --sort pid --reverse)
expect_eq "--sort pid --reverse: the highest pid first" "$(printf '%s\n' "$R" | jq .top.rows[0].pid)" \
    4194603
expect_eq "... and the lowest last" "$(printf '%s\n' "$R" | jq .top.rows[-1].pid)" \
    "$(printf '%s\n' "$BUSY $PARENT $C1 $C2" | tr ' ' '\n' | grep -v "^$PARENT$" | sort -n | head -1)"
expect_eq "--sort sm: the busiest first" "$(top_json --sort sm | jq -c '[.top.rows[0:2][] | .pid]')" \
    "[4194603,$BUSY]"

# the filter
F=$(top_json --filter "user:$ME")
expect_eq "--filter user: only my jobs" "$(printf '%s\n' "$F" | jq '.top.rows | length')" 3
expect_eq "... of all the processes" "$(printf '%s\n' "$F" | jq '.top.processes')" 6
expect_eq "--filter gpu:1 role:workload" "$(rows "$(top_json --filter 'gpu:1 role:workload')")" \
    '[4194603]'
expect_eq "--filter '!role:workload': the rest" "$(rows "$(top_json --filter '!role:workload')")" \
    '[4194602]'
expect_eq "--filter WORD: in the command line" "$(rows "$(top_json --filter ffmpeg)")" '[4194601]'
OUT=$("$VRAM" top --once --filter 'colour:red' 2>&1)
expect_eq "a filter that does not parse: exit 2" "$?" 2
expect_match "... and what to type" "$OUT" "no such filter; use user:, name:, gpu:"

# the tree: a parent on no GPU shows where two branches meet: this
# script's shell (the busy job, and the parent of two), then that parent
TR=$(top_json --tree --filter "user:$ME")
depth() { printf '%s\n' "$TR" | jq -c ".top.rows[] | select(.pid == $1) | [.context, .depth]"; }
expect_eq "--tree: this shell at the root, on no GPU" "$(depth $$)" '[true,0]'
expect_eq "... the busy job under it" "$(depth $BUSY)" '[false,1]'
expect_eq "... the parent of two beside it, on no GPU" "$(depth $PARENT)" '[true,1]'
expect_eq "... its jobs under it" "$(depth $C1) $(depth $C2)" '[false,2] [false,2]'
expect_eq "... each child right after its parent" \
    "$(printf '%s\n' "$TR" | jq -c "[.top.rows[] | .pid] | index($PARENT) as \$p | .[\$p + 1:\$p + 3] | sort")" \
    "$(printf '[%s]' "$(printf '%s\n%s\n' "$C1" "$C2" | sort -n | paste -sd,)")"
expect_eq "... and a parent's own fields" \
    "$(printf '%s\n' "$TR" | jq -r ".top.rows[] | select(.pid == $PARENT) | .process.user")" "$ME"
expect_eq "the list: no parent on no GPU" "$(printf '%s\n' "$F" | jq '[.top.rows[] | select(.context)] | length')" 0

# the frame: 80x24, then 200x60
S=$(COLUMNS=80 LINES=24 LANG=C.UTF-8 "$VRAM" top --once -d 0.3)
expect_match "80x24: the header" "$S" '^vram top +sort vram +every 0\.3s +driver 580\.95\.05'
expect_match "80x24: the columns that fit" "$S" '^ +PID USER +GPU +VRAM +SM% +CPU% +RSS +TIME COMMAND$'
expect_match "80x24: GPU 0's meters, with graphs" "$S" '^   GPU  87% .* MBW  41% .* 71C  245/300 W'
expect_match "80x24: clocks, PCIe, encoder on the next line" "$S" \
    '^   SM 2505/3105 MHz  MEM 10001 MHz  PCIe rx 1\.2 GB/s tx 350 MB/s  ENC 12%'
expect_match "80x24: the busy job, its SM% and CPU%" "$S" "^ *$BUSY $ME +0 +1\.29 GiB +60 +[0-9.]+ "
expect_match "80x24: a process /proc does not show" "$S" '^4194601 \? +0 +2\.00 GiB +55 +- +- +- /usr/bin/ffmpeg'
expect_eq "80x24: 24 lines at most" "$(printf '%s\n' "$S" | wc -l | awk '$1 <= 24 {print "ok"}')" ok
expect_eq "80x24: nothing past 80 columns" "$(printf '%s\n' "$S" | wc -L | awk '$1 <= 80 {print "ok"}')" ok
W=$(COLUMNS=200 LINES=60 LANG=C.UTF-8 "$VRAM" top --once -d 0.3)
expect_match "200x60: every column" "$W" \
    '^ +PID USER +GPU ROLE +TYPE +VRAM +SM% MBW% ENC% DEC% +CPU% +RSS +TIME STATE +COMMAND$'
expect_match "200x60: a GPU's meters on one line" "$W" \
    '^   GPU  87% .* MBW  41% .* 71C  245/300 W .* SM 2505/3105 MHz  MEM 10001 MHz  PCIe rx 1\.2 GB/s tx 350 MB/s  ENC 12%  DEC 3%'
expect_match "200x60: ffmpeg's shares" "$W" '^4194601 \? +0 workload compute +2\.00 GiB +55 +30 +12 +3 +- +- +- - +/usr/bin/ffmpeg'
expect_match "200x60: a job's state and running time" "$W" "^ *$C1 $ME +0 workload compute .* [0-9]+:[0-9]{2} sleeping "
expect_eq "200x60: nothing past 200 columns" "$(printf '%s\n' "$W" | wc -L | awk '$1 <= 200 {print "ok"}')" ok
T2=$(COLUMNS=120 LINES=30 LANG=C.UTF-8 "$VRAM" top --once -d 0.3 --tree --filter "user:$ME")
expect_match "the tree drawn: a job under its parent" "$T2" "^ *$C1 .*(├─|└─)/"

# a driver without these calls: "-" and null, not 0
sed 's/"cuda_version": 13000,/"cuda_version": 13000, "absent": ["nvmlDeviceGetProcessUtilization", "nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxClockInfo", "nvmlDeviceGetPcieThroughput", "nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetDecoderUtilization"],/' \
    "$VRAM_SIM" >"$T/old.json"
O=$(VRAM_SIM="$T/old.json" top_json)
expect_eq "an old driver: no shares, no clocks, no PCIe, no video engines" \
    "$(printf '%s\n' "$O" | jq -c '[.gpus[0] | .clocks_mhz, .pcie_throughput_kb_s, .encoder_pct, .decoder_pct, .processes[0].utilization]')" \
    '[null,null,null,null,null]'
OS=$(VRAM_SIM="$T/old.json" COLUMNS=80 LINES=24 "$VRAM" top --once -d 0.3)
expect_match "... its SM% is -" "$OS" '^4194601 \? +0 +2\.00 GiB +- '
expect_match "... and the meters it has stay" "$OS" '^   GPU  87% '

# status gives the host's figures it reads anyway, and no shares
SJ=$("$VRAM" status --json)
expect_match "status --json: a job's RSS and CPU time" \
    "$(printf '%s\n' "$SJ" | jq -c "[.gpus[].processes[] | select(.pid == $BUSY)][0] | [.rss > 0, .cpu_ms >= 0, .utilization]")" \
    '^\[true,true,null\]$'

OUT=$("$VRAM" top </dev/null 2>&1)
expect_eq "without a terminal: exit 2" "$?" 2
expect_match "... naming --once" "$OUT" "for scripts use vram top --once"
finish
