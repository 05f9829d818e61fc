#!/bin/bash
# top_cost.sh: what one refresh of `vram top` costs in CPU with N GPU
# processes (50 by default), measured from outside: N processes hold a
# little memory each (simalloc, a CUDA context and 64 MiB), vram top runs
# in a pseudo-terminal at 200x60 refreshing every INTERVAL seconds, and its
# CPU time (user + system, from /proc/PID/stat) over a steady window is
# divided by the refreshes in it. Run once in the list view and once in
# the tree (which asks /proc for parents). On the simulated driver when
# VRAM_SIM is set (this build machine), else on the machine's GPU.
#
#   bash bench/top_cost.sh [DIR] [N] [INTERVAL] [SECONDS]
#
# DIR holds vram and simalloc (default .devbuild, else build-rel, else
# build); N 50; INTERVAL 0.5; SECONDS 20. Logs to $OUT, table last.
set -eu
cd "$(dirname "$0")/.."
DIR=${1:-}
if [ -z "$DIR" ]; then
    for c in .devbuild build-rel build; do [ -x "$c/vram" ] && DIR=$c && break; done
fi
N=${2:-50}
INTERVAL=${3:-0.5}
SECS=${4:-20}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
SIMALLOC=$DIR/simalloc
[ -x "$SIMALLOC" ] || SIMALLOC=$DIR/tests/simalloc
[ -x "$DIR/vram" ] && [ -x "$SIMALLOC" ] ||
    { echo "top_cost: no vram or simalloc in '$DIR' (bench/build_for_device.sh)" >&2; exit 2; }

# the N processes, each holding its memory until its stdin closes
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
mkfifo "$OUT/top_cost.hold" 2>/dev/null || true
sleep 100000 >"$OUT/top_cost.hold" &
PIDS+=($!)
for i in $(seq 1 "$N"); do
    "$SIMALLOC" --bytes 64M <"$OUT/top_cost.hold" >"$OUT/top_cost.job$i" 2>&1 &
    PIDS+=($!)
done
for i in $(seq 1 "$N"); do
    for _ in $(seq 1 600); do grep -q '^ready' "$OUT/top_cost.job$i" 2>/dev/null && break; sleep 0.05; done
    grep -q '^ready' "$OUT/top_cost.job$i" || { echo "top_cost: job $i did not start:" >&2; cat "$OUT/top_cost.job$i" >&2; exit 1; }
done

VRAM="$DIR/vram" INTERVAL="$INTERVAL" SECS="$SECS" N="$N" OUT="$OUT" python3 - <<'PY'
import os, pty, select, struct, fcntl, termios, time, signal

vram, interval, secs, n, out = (os.environ["VRAM"], float(os.environ["INTERVAL"]),
                                float(os.environ["SECS"]), int(os.environ["N"]), os.environ["OUT"])
hz = os.sysconf("SC_CLK_TCK")

def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])  # utime + stime

def run(extra):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ["LANG"] = "C.UTF-8"
        os.execv(vram, [vram, "top", "--interval", str(interval)] + extra)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 200, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    got = 0
    def drain(until):
        nonlocal got
        while time.monotonic() < until:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    got += len(os.read(fd, 65536))
                except OSError:
                    return
    drain(time.monotonic() + 3)  # start, first samples, the first /proc scan
    t0, c0 = time.monotonic(), cpu_ticks(pid)
    drain(t0 + secs)
    t1, c1 = time.monotonic(), cpu_ticks(pid)
    os.write(fd, b"q")
    drain(time.monotonic() + 1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    refreshes = (t1 - t0) / interval
    ms = (c1 - c0) * 1000 / hz
    return refreshes, ms, got

rows = []
with open(os.path.join(out, "top_cost.log"), "w") as log:
    for name, extra in (("list", []), ("tree", ["--tree"])):
        refreshes, ms, got = run(extra)
        log.write(f"{name}: {refreshes:.0f} refreshes, {ms:.1f} ms CPU, {got} bytes drawn\n")
        rows.append((name, refreshes, ms))
print(f"\nvram top at 200x60, every {interval}s, {n} GPU processes, {secs:.0f}s steady ({vram})")
print(f"{'view':6} {'refreshes':>9} {'CPU ms':>8} {'CPU ms per refresh':>19} {'CPU % of a core':>16}")
for name, refreshes, ms in rows:
    print(f"{name:6} {refreshes:9.0f} {ms:8.1f} {ms / refreshes:19.2f} {ms / 10 / secs:16.2f}")
PY
