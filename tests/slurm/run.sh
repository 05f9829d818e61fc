#!/bin/sh
# A one-node Slurm cluster on the simulated driver (one 16 GiB GPU): munge
# with a key of its own, slurmctld and slurmd, all on this machine,
# configured and kept in the test's folder on ports of its own, the GRES
# lines written by `vram slurm gres`, the SPANK plugin in plugstack.conf;
# jobs of two real users. What docs/slurm.md promises: two jobs asking for
# 6G run side by side and a third waits for one to end; a job over its cap
# gets CUDA's out-of-memory error and its neighbour's bytes are intact;
# each job's peak in its output and AdminComment; a process a job left
# holding GPU memory is ended by the epilog; options typed wrong get
# Slurm's kind of error. Everything is stopped at the end, failed or not.
# Not in a network namespace of its own (lib.sh's test world): Slurm's
# daemons ask getaddrinfo for their listening address with AI_ADDRCONFIG,
# which finds none where the loopback is the only interface. Its ports are
# its own anyway (cluster.sh), and it reads none of vram's system places.
export VRAM_TEST_WORLD=none
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/../cli/users.sh"
: "${SWAPMODEL:?}"
for p in slurmctld slurmd srun sbatch salloc scontrol squeue munged mungekey; do
    if ! command -v $p >/dev/null; then
        echo "skipped: $p is not installed (scripts/deps --test installs Slurm and munge)"
        exit 77
    fi
done
if [ -z "${SPANK:-}" ] || [ ! -f "$SPANK" ]; then
    echo "skipped: spank_vram.so was not built (no slurm/spank.h: apt install libslurm-dev)"
    exit 77
fi
if ! make_users; then
    echo "skipped: slurmd starts jobs as their users, which needs root (and useradd, setpriv)"
    exit 77
fi
BIN="$T/bin"
cp "$SIMALLOC" "$BIN/simalloc"
cp "$SRC/tests/fixtures/machines/one-16g.json" "$BIN/machine.json"
rm -f "$VRAM_SIM_STATE"*
"$VRAM" status >/dev/null 2>&1 # the ledger of the one-GPU machine, 0666
chmod -R a+rX "$BIN"
S="$T/slurm"
. "$(dirname "$0")/cluster.sh"
trap 'cluster_stop; cleanup' EXIT

# the node's GRES as vram measures it: what the admin pastes
GRES_OUT=$("$VRAM" slurm gres)
expect_match "vram slurm gres: GresTypes for slurm.conf" "$GRES_OUT" "^GresTypes=vram$"
expect_match "the GPU's 16 GiB less the driver's 0.5 GiB, in MiB" "$GRES_OUT" \
    "^NodeName=$(hostname -s) Gres=vram:15872M$"
expect_match "and gres.conf's line, a count GRES" "$GRES_OUT" \
    "^NodeName=$(hostname -s) Name=vram Count=15872M Flags=CountOnly$"
# beside gres/gpu and gres/shard, as sites already have them: their device
# file is a character device named as the GPU's would be
mkdir -p "$S/dev"
ln -s /dev/null "$S/dev/nvidia0"
GRES_TYPES=vram,gpu,shard
NODE_GRES="$(printf '%s\n' "$GRES_OUT" | sed -n 's/^NodeName=[^ ]* Gres=//p'),gpu:1,shard:16"
GRES_CONF="AutoDetect=off
$(printf '%s\n' "$GRES_OUT" | grep '^NodeName=.* Name=vram ')
Name=gpu File=$S/dev/nvidia0
Name=shard Count=16 File=$S/dev/nvidia0"
PLUG_ARGS="vram=$BIN/vram grace=1 env=VRAM_SIM=$VRAM_SIM env=LD_LIBRARY_PATH=$LD_LIBRARY_PATH env=VRAM_SIM_STATE=$VRAM_SIM_STATE env=VRAM_RUN_DIR=$VRAM_RUN_DIR env=ASAN_OPTIONS=$ASAN_OPTIONS"
# --vram=SIZE asks Slurm for the memory too: cli_filter.lua beside slurm.conf
CONF_EXTRA="CliFilterPlugins=cli_filter/lua"
mkdir -p "$S"
cp "$SRC/examples/slurm/cli_filter.lua" "$S/"
chmod a+r "$S/cli_filter.lua"
if ! cluster_start; then
    not_ok "the cluster starts"
    finish
    exit 1
fi
NODE=$(hostname -s)
expect_eq "sinfo: the node's GRES, vram's beside gpu and shard" "$(sinfo -h -o %G)" \
    "vram:15872M,gpu:1,shard:16"

# sub USER ARGS...: sbatch as that user, in its folder; the job's id
sub() {
    u=$1
    shift
    d=b
    [ "$u" = "$USER_A" ] && d=a
    setpriv --reuid="$u" --regid="$u" --clear-groups -- sbatch --parsable -D "$T/$d" "$@"
}
state() { squeue -h -j "$1" -o %T 2>/dev/null; }
# ready FILE: simalloc or swapmodel's "ready PID" in the job's output, 20 s at most
ready_pid() { wait_for 20 grep -q '^ready' "$1" && sed -n 's/^ready \([0-9]*\).*/\1/p' "$1" | head -1; }
# ended JOB: the job has left the queue's running states
ended() { ! state "$1" | grep -qE 'RUNNING|PENDING|COMPLETING|CONFIGURING'; }

# options typed wrong: Slurm's errors, before anything runs
OUT=$(srun --vram=lots true 2>&1)
expect_eq "srun --vram=lots: refused" "$?" 255
expect_match "in Slurm's words, with the fix" "$OUT" \
    "^srun: error: --vram=lots: give a size of at least 1M, such as 6G or 512M$"
expect_match "and Slurm's own line" "$OUT" "^srun: error: Invalid --vram argument: lots$"
OUT=$(sbatch --vram=0 --wrap true 2>&1)
expect_match "sbatch --vram=0: refused" "$OUT" "^sbatch: error: --vram=0: give a size of at least 1M"
OUT=$(salloc --vram=6Q true 2>&1)
expect_match "salloc --vram=6Q: refused" "$OUT" "^salloc: error: --vram=6Q: give a size of at least 1M"
expect_match "srun --help lists --vram" "$(srun --help 2>&1)" "--vram=SIZE +cap the GPU memory"
OUT=$(setpriv --reuid="$USER_A" --regid="$USER_A" --clear-groups -- \
    srun -D "$T/a" --gres=vram:6 true 2>&1)
expect_eq "--gres=vram:6 (6 bytes): the step fails" "$?" 1
expect_match "saying what to ask" "$OUT" \
    "vram: --gres=vram:6 asks for 6 bytes of GPU memory: give a size with its unit, such as --gres=vram:6G"
OUT=$(setpriv --reuid="$USER_A" --regid="$USER_A" --clear-groups -- \
    srun -D "$T/a" --gres=vram:4G --vram=8G true 2>&1)
expect_match "--vram over the job's GRES: refused, and why" "$OUT" \
    "vram: --vram=8G is more than the job's --gres=vram \(4.00 GiB, what Slurm counted for it on this node\); ask --gres=vram:8G"

# two jobs of --vram=6G side by side on the 16 GiB GPU, two users; a
# third waits (cli_filter.lua asked Slurm for --gres=vram:6G for each)
A=$(sub "$USER_A" -o "$T/a/A.out" --vram=6G -t 5 \
    --wrap "exec $BIN/swapmodel --linear 256M --workers 0")
# B first goes past its cap, then holds 1 GiB like any job
B=$(sub "$USER_B" -o "$T/b/B.out" --vram=6G -t 5 \
    --wrap "$BIN/simalloc --bytes 7G </dev/null; exec $BIN/simalloc --bytes 1G --hold")
PA=$(ready_pid "$T/a/A.out")
PB=$(ready_pid "$T/b/B.out")
expect_eq "job A (6G) runs" "$(state "$A")" RUNNING
expect_eq "job B (6G) runs beside it, on the same GPU" "$(state "$B")" RUNNING
expect_match "B past its 6 GiB cap: CUDA's out-of-memory error from its own allocation" \
    "$(cat "$T/b/B.out")" "^oom 2$"
expect_match "B's tasks see the cap as their GPU's memory" "$(cat "$T/b/B.out")" \
    "^ready [0-9]+ free [0-9]+ total 6442450944 nvml 6442450944$"
kill -USR1 "$PA" 2>/dev/null
wait_for 20 grep -q 'weights ok\|CORRUPT' "$T/a/A.out"
expect_match "A's bytes are intact after its neighbour's failure" "$(cat "$T/a/A.out")" "^weights ok"
C=$(sub "$USER_A" -o "$T/a/C.out" --vram=6G -t 5 --wrap "exec $BIN/simalloc --bytes 1G --hold")
expect_match "cli_filter.lua: --vram=6G asked Slurm for the memory" "$(scontrol show job "$C")" \
    "TresPerNode=gres:vram:6G"
wait_for 10 sh -c "squeue -h -j $C -o %r | grep -q Resources"
expect_eq "a third job of 6G waits: 18 GiB asked of 15.5" "$(state "$C"):$(squeue -h -j "$C" -o %r)" \
    "PENDING:Resources"
kill "$PB"
wait_for 30 grep -q '^ready' "$T/a/C.out"
expect_eq "once B ends, C runs" "$(state "$C")" RUNNING
PC=$(ready_pid "$T/a/C.out")
kill "$PA" "$PC"
wait_for 30 ended "$A"
wait_for 30 ended "$B"
wait_for 30 ended "$C"
expect_match "A's output: its peak against its cap" "$(cat "$T/a/A.out")" \
    "^vram: batch step: peak VRAM 556.0 MiB of 6.00 GiB on GPU 0$"
expect_match "A's record (scontrol show job; sacct -o AdminComment with slurmdbd): its peak" \
    "$(scontrol show job "$A")" \
    "AdminComment=vram batch step: peak VRAM 556.0 MiB of 6.00 GiB on GPU 0"
expect_match "B's: its peak (the 7G it was refused counts for nothing)" "$(scontrol show job "$B")" \
    "AdminComment=vram batch step: peak VRAM 1\.[0-9]+ GiB of 6.00 GiB on GPU 0"
expect_match "C's" "$(scontrol show job "$C")" \
    "AdminComment=vram batch step: peak VRAM 1.29 GiB of 6.00 GiB on GPU 0"

# srun: the step's peak on srun's stderr; --vram under the GRES caps tighter
# as_a_srun ARGS...: srun as USER_A, without srun's lines about the queue
as_a_srun() {
    setpriv --reuid="$USER_A" --regid="$USER_A" --clear-groups -- srun -D "$T/a" "$@" \
        >"$T/srun.out" 2>&1
    _rc=$?
    grep -v '^srun: job [0-9]* \(queued and waiting\|has been allocated\)' "$T/srun.out"
    return $_rc
}
OUT=$(as_a_srun --gres=vram:2G "$BIN/simalloc" --bytes 1G </dev/null 2>&1)
expect_match "srun --gres=vram:2G: capped, its peak said" "$OUT" \
    "^vram: step 0: peak VRAM 1.29 GiB of 2.00 GiB on GPU 0$"
OUT=$(as_a_srun --gres=vram:4G --vram=2G "$BIN/simalloc" --bytes 3G </dev/null 2>&1)
expect_match "--vram=2G within --gres=vram:4G: the cap is 2G" "$OUT" "^oom 2$"
# beside gres/gpu and gres/shard: the GPU Slurm gave, by its UUID
OUT=$(as_a_srun --gres=gpu:1 --vram=2G sh -c 'echo "$CUDA_VISIBLE_DEVICES $VRAM_SWAP"' 2>&1)
expect_match "--gres=gpu:1 --vram=2G: the GPU Slurm gave, by UUID, fast swap on" "$OUT" \
    "^GPU-16000000-0000-4000-8000-0000000000a0 1$"
OUT=$(as_a_srun --gres=shard:4,vram:4G "$BIN/simalloc" --bytes 1G </dev/null 2>&1)
expect_match "--gres=shard:4,vram:4G: capped at 4G" "$OUT" \
    "^vram: step 0: peak VRAM 1.29 GiB of 4.00 GiB on GPU 0$"
OUT=$(as_a_srun --vram=1G sh -c 'echo "group: $VRAM_CAP_GROUP $SLURM_JOB_ID"' 2>&1)
expect_match "srun --vram=1G: capped" "$OUT" "^group: $T/shared/vram-group-"
expect_match "and counted by Slurm (cli_filter.lua)" \
    "$(scontrol show job "$(echo "$OUT" | sed -n 's/^group: [^ ]* //p')")" "TresPerNode=gres:vram:1G"
OUT=$(as_a_srun sh -c 'echo "[$VRAM_CAP_GROUP]"' 2>&1)
expect_eq "a job that asks for no GPU memory: left alone" "$OUT" "[]"

# what a node without a GPU or without libvramcap says
OUT=$(unset VRAM_SIM && export LD_LIBRARY_PATH="$T/nolib" && as_a_srun --vram=1G true)
expect_eq "no GPU driver on the node: the step fails" "$?" 1
expect_match "saying so" "$OUT" "vram: node $NODE has no GPU driver vram can use"
OUT=$(VRAM_SHIM=$T/none.so as_a_srun --vram=1G true 2>&1)
expect_match "no libvramcap: the step fails, saying so" "$OUT" \
    "vram: VRAM_SHIM=$T/none.so: No such file or directory"

# a process the job left behind, holding GPU memory: the epilog ends it
D=$(sub "$USER_A" -o "$T/a/D.out" --gres=vram:1G -t 5 --wrap "
    setsid $BIN/simalloc --bytes 512M --hold >$T/a/orphan.out 2>&1 </dev/null &
    for i in \$(seq 200); do grep -q ^ready $T/a/orphan.out && break; sleep 0.05; done")
wait_for 30 ended "$D"
ORPHAN=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/a/orphan.out")
[ -n "$ORPHAN" ] || not_ok "the job left a process holding GPU memory" "$(cat "$T/a/D.out")"
wait_for 20 sh -c "! kill -0 $ORPHAN 2>/dev/null"
if kill -0 "$ORPHAN" 2>/dev/null; then
    not_ok "the epilog ended the process the job left" "$(grep vram "$S/slurmd.log")"
    kill -9 "$ORPHAN"
else
    ok "the epilog ended the process the job left"
fi
wait_for 10 grep -q "pid $ORPHAN ended" "$S/slurmd.log"
expect_match "slurmd's log says what it found" "$(cat "$S/slurmd.log")" \
    "vram: job $D left pid $ORPHAN \(simalloc\) holding 812.0 MiB on GPU 0: ending it"
expect_match "and that the memory is back" "$(cat "$S/slurmd.log")" \
    "vram: job $D: pid $ORPHAN ended; its GPU memory is back"

finish
