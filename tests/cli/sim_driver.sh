#!/bin/sh
# Test jobs allocating through the simulated CUDA driver show up in
# `vram status` as compute processes with the right bytes; memory comes back
# when they end, even by SIGKILL.
. "$(dirname "$0")/lib.sh"
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
ME=$(id -un)
CTX=$((300 * MiB)) # the workstation's context footprint

used() { "$VRAM" status --json | jq ".gpus[$1].memory.used"; }
BASE=$(used 0)

start_job a --bytes 3G || not_ok "job a started"
A=$JOB_PID
J=$("$VRAM" status --json)
expect_eq "job a listed as a compute workload of $ME" \
    "$(echo "$J" | jq -c ".gpus[0].processes[] | select(.pid == $A) | [.type, .role, .user, .name]")" \
    "[\"compute\",\"workload\",\"$ME\",\"simalloc\"]"
expect_eq "job a's bytes: 3 GiB + its context" \
    "$(echo "$J" | jq ".gpus[0].processes[] | select(.pid == $A) | .used")" $((3 * GiB + CTX))
expect_eq "used grew by the same" "$(echo "$J" | jq '.gpus[0].memory.used')" $((BASE + 3 * GiB + CTX))
expect_eq "workloads part" "$(echo "$J" | jq '.gpus[0].breakdown.workloads')" $((3 * GiB + CTX))
expect_match "cuMemGetInfo agrees with NVML" "$(cat "$T/a.out")" \
    "free $((16 * GiB - 483183821 - BASE - 3 * GiB - CTX)) total $((16 * GiB))"

# the cuGetProcAddress path, the way CUDA 12+ runtimes resolve the driver
start_job b --bytes 1G --count 2 --proc-address || not_ok "job b started"
B=$JOB_PID
expect_eq "job b (via cuGetProcAddress) counted" \
    "$("$VRAM" status --json | jq ".gpus[0].processes[] | select(.pid == $B) | .used")" $((2 * GiB + CTX))

T1=$("$VRAM" status)
expect_match "text lists the workloads" "$T1" 'workloads +5.59 GiB   simalloc 3.29 GiB, simalloc 2.29 GiB'

# SIGKILL: the driver frees a dead process's memory
kill -9 $A
wait $A 2>/dev/null
expect_eq "after SIGKILL, job a's memory is back" "$(used 0)" $((BASE + 2 * GiB + CTX))
expect_eq "and job a is no longer listed" \
    "$("$VRAM" status --json | jq "[.gpus[0].processes[] | select(.pid == $A)] | length")" 0

# more than is free: CUDA_ERROR_OUT_OF_MEMORY (2), nothing charged
start_job c --bytes 14G
expect_match "an allocation larger than free fails with OOM" "$(cat "$T/c.out")" '^oom 2'
expect_eq "and charges nothing" "$(used 0)" $((BASE + 2 * GiB + CTX))

# a graphics client (an OpenGL app) is display, not workload
VRAM_SIM_GRAPHICS=1 start_job d --bytes 256M || not_ok "job d started"
D=$JOB_PID
expect_eq "graphics client classified display/graphics" \
    "$("$VRAM" status --json | jq -c ".gpus[0].processes[] | select(.pid == $D) | [.type, .role]")" \
    '["graphics","display"]'

# the 8-GPU server: CUDA_VISIBLE_DEVICES picks the GPU, by index or UUID
export VRAM_SIM="$SRV"
CUDA_VISIBLE_DEVICES=3 start_job e --bytes 10G || not_ok "job e started"
E=$JOB_PID
CUDA_VISIBLE_DEVICES=GPU-8a0e0c55-4200-4000-8000-000000000006 start_job f --bytes 1G || not_ok "job f"
F=$JOB_PID
J=$("$VRAM" status --json)
expect_eq "CUDA_VISIBLE_DEVICES=3 lands on GPU 3" \
    "$(echo "$J" | jq -c "[.gpus[] | select(.processes[].pid == $E) | .index]")" "[3]"
expect_eq "a UUID lands on GPU 6" \
    "$(echo "$J" | jq -c "[.gpus[] | select(.processes[].pid == $F) | .index]")" "[6]"

# a process in a PID namespace of its own (a container): the driver lists it
# under its host pid, which is not the pid it knows (VRAM_SIM_PIDNS)
export VRAM_SIM_PIDNS=1
CUDA_VISIBLE_DEVICES=2 start_job g --bytes 1G || not_ok "job g started"
G=$JOB_PID
unset VRAM_SIM_PIDNS
J=$("$VRAM" status --json)
expect_eq "in a PID namespace: listed under another pid, not its own" \
    "$(echo "$J" | jq -c "[.gpus[2].processes[] | select(.used == $((GiB + 520 * MiB))) | .pid == $G]")" \
    "[false]"
expect_eq "and named by the driver under that pid" \
    "$(echo "$J" | jq -r ".gpus[2].processes[] | select(.pid == $((G + 4194304))) | .name")" simalloc

# a freed block is handed back to the next allocation of its size, as a
# GPU's memory stays where it is (sim/devmem.c), but never with the bytes
# written before: a resume that failed to copy back cannot pass for intact
start_job r --bytes 64M --reuse || not_ok "job r started"
expect_match "freed memory comes back to the next allocation of its size, poisoned" \
    "$(cat "$T/r.out")" "^reuse same fresh$"

finish
