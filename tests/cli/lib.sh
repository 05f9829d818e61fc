# lib.sh: what the command-line tests share: a private simulated-driver
# ledger, helpers to start test jobs, and pass/fail counting.
# Needs VRAM, SIMALLOC and SRC in the environment (meson sets them).
set -u
: "${VRAM:?}" "${SIMALLOC:?}" "${SRC:?}"
# As root (CI), a test is a machine of its own for what other programs could
# share with it: a network namespace of its own, its loopback up (its ports
# are free whatever else runs: the other tests, an installed vram serve on
# 11500), and a mount namespace where the system places vram reads are
# empty folders: an installed vram's /etc/vram/vram.conf (vram fit and
# vram serve read it as root), its state, logs and socket, and the models
# of an Ollama service (/usr/share/ollama, which vram fit lists and
# discover = all serves whatever HOME says) are not the test's.
# The script starts again in them (the same pid: exec). Not root, or no
# namespaces to be had (a container may refuse them): it runs as it is.
if [ -z "${VRAM_TEST_WORLD:-}" ] && [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null &&
    unshare --net --mount sh -c 'ip link set lo up' 2>/dev/null; then
    export VRAM_TEST_WORLD=1
    exec unshare --net --mount --propagation private sh -c '
        ip link set lo up || exit 1
        for d in /etc/vram /var/lib/vram /var/log/vram /run/vram /usr/share/ollama; do
            [ ! -d "$d" ] || mount -t tmpfs -o mode=0755 vram-test "$d" || exit 1
        done
        exec "$@"' test-world "$0" "$@"
fi
T=$(mktemp -d /tmp/vram-cli-XXXXXX)
# libvramcap is preloaded into test programs that may be built with ASan,
# whose runtime then is not first in the library list: that is fine here
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# a home of its own, and none of the settings vram (and what it reads)
# takes from the environment of whoever runs the tests: a person who uses
# Ollama may have OLLAMA_KEEP_ALIVE set, a GPU machine CUDA_VISIBLE_DEVICES,
# a shell VRAM_SOCKET; a test sets what it needs
export HOME="$T/home"
mkdir -p "$HOME"
unset VRAM_CONFIG VRAM_SOCKET VRAM_SHIM VRAM_CAP VRAM_CAP_GROUP VRAM_SWAP VRAM_SWAP_POOL \
    VRAM_SWAP_HOST_MAX VRAM_SWAP_DAEMON VRAM_SIM VRAM_SIM_LIBDIR VRAM_SIM_PIDNS VRAM_SIM_PDH \
    VRAM_SIM_NVML_DELAY_MS VRAM_SIM_GRAPHICS VRAM_TEST_DIE_AT OLLAMA_MODELS OLLAMA_KEEP_ALIVE \
    OLLAMA_MAX_LOADED_MODELS OLLAMA_MAX_QUEUE OLLAMA_ORIGINS HF_HOME HF_HUB_CACHE LLAMA_CACHE \
    XDG_CONFIG_HOME XDG_STATE_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_RUNTIME_DIR \
    CUDA_VISIBLE_DEVICES NO_COLOR NOTIFY_SOCKET JOURNAL_STREAM DISPLAY WAYLAND_DISPLAY PAGER
export VRAM_SIM_STATE="$T/ledger"
# As root, vram serve runs its models as vram-model (the package makes that
# user): made here as the package does, and $T open to it as /dev/shm is
# (sticky): models run the programs copied there and write their files there
if [ "$(id -u)" -eq 0 ]; then
    # tests run in parallel: another may be adding it (useradd locks /etc/passwd)
    for _ in $(seq 1 50); do
        id -u vram-model >/dev/null 2>&1 && break
        useradd --system --user-group --home-dir /var/lib/vram/models --shell /usr/sbin/nologin \
            vram-model >/dev/null 2>&1 || sleep 0.1
    done
    chmod 1777 "$T"
    # the build tree must be one others may enter (not under /root): its
    # models run its programs and libvramcap
    if [ -n "${SHIM:-}" ] && command -v setpriv >/dev/null &&
        ! setpriv --reuid=vram-model --regid=vram-model --clear-groups -- test -r "$SHIM"; then
        echo "lib.sh: vram-model, the user root's vram serve runs models as, cannot read $SHIM:" \
            "put the checkout where every user may enter (chmod o+x on its folders)" >&2
    fi
fi
# each test script is its own machine: its own slices and admission lock
export VRAM_RUN_DIR="$T"
# and no cache of the user who runs the tests is read or written
export XDG_CACHE_HOME="$T/cache"
WS="$SRC/examples/workstation.json"
SRV="$SRC/examples/server-8xh200.json"
PASS=0
FAIL=0
JOBS=""
GiB=1073741824
MiB=1048576

# AT_EXIT: commands run when the test ends, before its folder goes
# (users.sh's users are removed so)
AT_EXIT=""
cleanup() {
    for p in $JOBS; do kill -9 "$p" 2>/dev/null; done
    eval "$AT_EXIT"
    rm -rf "$T"
}
trap cleanup EXIT
# killed (meson's timeout sends TERM): the same cleanup, on the way out
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

ok() { PASS=$((PASS + 1)); echo "ok - $1"; }
not_ok() { FAIL=$((FAIL + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

# expect_eq NAME GOT WANT
expect_eq() {
    if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got:  $2" "want: $3"; fi
}

# expect_match NAME TEXT PATTERN (grep -E)
expect_match() {
    if printf '%s\n' "$2" | grep -Eq -- "$3"; then ok "$1"; else not_ok "$1" "no /$3/ in:" "$2"; fi
}

# start_job NAME ARGS...: runs simalloc in the background, its stdin a pipe
# held open by a sleeper, waits for "ready", sets JOB_PID.
start_job() {
    name=$1
    shift
    mkfifo "$T/$name.in"
    "$SIMALLOC" "$@" <"$T/$name.in" >"$T/$name.out" 2>&1 &
    JOB_PID=$!
    sleep 600 >"$T/$name.in" &
    JOBS="$JOBS $JOB_PID $!"
    for _ in $(seq 1 100); do
        grep -q '^ready\|^oom' "$T/$name.out" 2>/dev/null && return 0
        kill -0 $JOB_PID 2>/dev/null || break
        sleep 0.05
    done
    cat "$T/$name.out" >&2
    return 1
}

# wait_ready FILE...: until each file has simalloc's "ready" line (5 s at most)
wait_ready() {
    for f in "$@"; do
        for _ in $(seq 1 100); do
            grep -q '^ready' "$f" 2>/dev/null && break
            sleep 0.05
        done
    done
}

# daemon_env SEED OFFSET: what a test of vram serve sets first: the
# simulated two-GPU machine, its socket in $T, and ports of its own (the
# CLI tests run in parallel): models from PORTS, the proxy on LISTEN
# (PORTS + OFFSET), P its address; all below 32768, where the kernel's
# ephemeral ports begin (another test's outgoing connection held one)
daemon_env() {
    export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
    export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
    export VRAM_SOCKET="$T/vram.sock"
    PORTS=$((10000 + ($$ * $1) % 20000))
    LISTEN=$((PORTS + $2))
    P="http://127.0.0.1:$LISTEN"
}

# serve_head: the [serve] section's lines every daemon test starts with:
# its socket, state and logs in $T, its models' ports from PORTS. A test
# adds its own settings after it: { serve_head; cat <<CONF ... CONF; }
serve_head() {
    printf '[serve]\nsocket = %s/vram.sock\nstate = %s/vram.db\nlogs = %s/logs\nport_base = %s\n' \
        "$T" "$T" "$T" "$PORTS"
}

# wait_for SECONDS CMD...: until CMD succeeds, polling every 50 ms; false
# when SECONDS pass first. Tests wait on conditions, never on a fixed sleep.
wait_for() {
    _limit=$(($1 * 20))
    shift
    _i=0
    while [ $_i -lt $_limit ]; do
        "$@" && return 0
        sleep 0.05
        _i=$((_i + 1))
    done
    return 1
}

finish() {
    echo "$PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
}
