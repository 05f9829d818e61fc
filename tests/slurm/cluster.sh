# cluster.sh: a one-node Slurm cluster in a folder, on ports of its own:
# munge with a key of its own, slurmctld and slurmd, the SPANK plugin in
# plugstack.conf, the node's GRES as vram slurm gres prints them. Sourced
# by tests/slurm/run.sh (CI, the simulated driver) and bench/gpu_slurm.sh
# (the GPU machine, Slurm carried by bench/slurm_carry.sh), so that both
# start the same cluster. The caller sets:
#   S           the cluster's folder (made here; its configuration, state, logs)
#   SPANK       spank_vram.so
#   PLUG_ARGS   the plugin's arguments (vram=PATH ...)
#   NODE_GRES   the node's Gres= (vram slurm gres's, and any other)
#   GRES_CONF   gres.conf's lines
#   GRES_TYPES  slurm.conf's GresTypes
#   SLURM_BIN   where the programs are ("" for PATH); SLURM_PLUGINDIR where
#               Slurm's plugins are ("" for Slurm's own); STEPD slurmstepd
#               ("" for slurmd's own)
#   CONF_EXTRA  more slurm.conf lines
# and calls cluster_start (0, or 1 with the logs' last lines on stderr),
# then cluster_stop, which cancels every job and stops the daemons,
# whatever state they are in. SLURM_CONF is exported.

CLUSTER_PIDS=""

# sl PROGRAM ARGS...: a Slurm or munge program from SLURM_BIN or PATH
sl() {
    _p=$1
    shift
    "$(sl_path "$_p")" "$@"
}

# the path of one (a daemon started in the background is that program
# itself, so that its pid is the daemon's)
sl_path() {
    if [ -n "${SLURM_BIN:-}" ]; then echo "$SLURM_BIN/$1"; else command -v "$1"; fi
}

# cl_wait SECONDS CMD...: until CMD succeeds, every 50 ms, SECONDS of the
# clock at most (a CMD that is slow itself counts)
cl_wait() {
    _until=$(($(date +%s) + $1))
    shift
    while :; do
        "$@" && return 0
        [ "$(date +%s)" -lt "$_until" ] || return 1
        sleep 0.05
    done
}

cl_idle() { sl sinfo -h -o %t 2>/dev/null | grep -qx idle; }
cl_empty() { [ -z "$(sl squeue -h 2>/dev/null)" ]; }

cluster_start() {
    NODE=$(hostname -s)
    PORT=${PORT:-$((20000 + ($$ * 7) % 10000))}
    mkdir -p "$S/state" "$S/spool" "$S/munge"
    chmod 755 "$S" "$S/munge"
    sl mungekey --create --keyfile="$S/munge/munge.key" >/dev/null 2>&1
    chmod 600 "$S/munge/munge.key"
    "$(sl_path munged)" -F --socket="$S/munge/munge.sock" --key-file="$S/munge/munge.key" \
        --pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" \
        --seed-file="$S/munge/munged.seed" >/dev/null 2>&1 &
    CLUSTER_PIDS="$!"
    if ! cl_wait 10 test -S "$S/munge/munge.sock"; then
        cat "$S/munge/munged.log" >&2
        return 1
    fi
    printf '%s\n' "$GRES_CONF" >"$S/gres.conf"
    # cgroup v2 without systemd's bus (a container, a bare VM): slurmd makes
    # its stepds' cgroup itself, or it does not start at all ("cannot
    # connect to dbus system daemon ... Unable to initialize cgroup plugin",
    # seen on the GPU machine)
    if [ -f /sys/fs/cgroup/cgroup.controllers ] && [ ! -S /run/dbus/system_bus_socket ]; then
        printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nCgroupAutomount=yes\n' >"$S/cgroup.conf"
        # which puts its scope under system.slice, there only where systemd
        # made it: without, "Could not create scope directory" (the GPU
        # machine, a sandbox with no init)
        mkdir -p /sys/fs/cgroup/system.slice 2>/dev/null || :
    fi
    echo "required $SPANK $PLUG_ARGS" >"$S/plugstack.conf"
    cat >"$S/slurm.conf" <<CONF
ClusterName=vram$$
${SLURM_PLUGINDIR:+PluginDir=$SLURM_PLUGINDIR}
${CONF_EXTRA:-}
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
PlugStackConfig=$S/plugstack.conf
GresTypes=$GRES_TYPES
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=8 Gres=$NODE_GRES State=UNKNOWN
PartitionName=p Nodes=$NODE Default=YES MaxTime=30 State=UP
CONF
    chmod a+r "$S/slurm.conf" "$S/gres.conf" "$S/plugstack.conf"
    export SLURM_CONF="$S/slurm.conf"
    "$(sl_path slurmctld)" -D -i >"$S/slurmctld.out" 2>&1 &
    CLUSTER_PIDS="$CLUSTER_PIDS $!"
    "$(sl_path slurmd)" -D -N "$NODE" ${STEPD:+-d "$STEPD"} >"$S/slurmd.out" 2>&1 &
    CLUSTER_PIDS="$CLUSTER_PIDS $!"
    if ! cl_wait 60 cl_idle; then
        tail -5 "$S/slurmctld.out" "$S/slurmd.out" "$S/slurmctld.log" "$S/slurmd.log" >&2 2>/dev/null
        return 1
    fi
}

cluster_stop() {
    # the jobs first (their slurmstepd outlive slurmd), then the daemons,
    # newest first
    if [ -n "$CLUSTER_PIDS" ] && [ -f "$S/slurm.conf" ]; then
        _jobs=$(sl squeue -h -o %i 2>/dev/null)
        [ -z "$_jobs" ] || sl scancel --quiet --full $_jobs 2>/dev/null
        cl_wait 20 cl_empty
    fi
    _rev=""
    for p in $CLUSTER_PIDS; do _rev="$p $_rev"; done
    for p in $_rev; do kill "$p" 2>/dev/null; done
    for p in $_rev; do
        cl_wait 10 sh -c "! kill -0 $p 2>/dev/null" || kill -9 "$p" 2>/dev/null
    done
    CLUSTER_PIDS=""
}
