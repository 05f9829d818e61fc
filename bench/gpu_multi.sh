#!/bin/bash
# gpu_multi.sh: models over several GPUs moved by fast swap (issue 21), on
# a real machine. It counts the GPUs and runs the parts that fit:
#   any GPU: one process with two CUDA contexts of its own on one GPU
#     (bench/gpu/multi_ctx.py, GIB/2 in each), suspended and resumed CYCLES
#     times by fast swap (vram run --swap; vram suspend/resume PID); and,
#     through vram serve, a model of two worker processes on that GPU,
#     GIB/2 each (a group: suspended and resumed all or none);
#   2 GPUs or more: through vram serve (gpus = 2), a PyTorch process with
#     GIB on each of two GPUs and peer access between them, with PyTorch's
#     default allocator (cudaMalloc, which fast swap turns into VMM memory
#     that libvramcap grants the peer after cuCtxEnablePeerAccess) and with
#     expandable segments (PyTorch's own cuMemSetAccess to the peer): the
#     copies between the GPUs are checked after each resume; and a model
#     of two worker processes, GIB each, one per GPU.
# Every byte is checked (checksums) after each resume. Times per GiB each
# way. Expects .devbuild/ (bench/build_for_device.sh: vram, libvramcap.so),
# PyTorch and numpy. Logs under $OUT (multi.log, serve.log, logs/ of the
# models, multi.jsonl); the table last.
#   bash bench/gpu_multi.sh [GIB] [CYCLES]    (whole GiB; default 8 10)
set -u
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=$PWD/.devbuild
GIB=${1:-8}
CYCLES=${2:-10}
HALF=$(python3 -c "print($GIB / 2)")
T=$(mktemp -d)
export VRAM_RUN_DIR=$T/run
export VRAM_SOCKET=$T/vram.sock
mkdir -p "$VRAM_RUN_DIR"
rm -f "$OUT/multi.jsonl"
LOG=$OUT/multi.log
ldd "$B/vram" | grep -E "not found" && { echo "missing libraries for vram"; exit 1; }
[ -e "$B/libvramcap.so" ] || { echo "no $B/libvramcap.so: run bench/build_for_device.sh"; exit 1; }
python3 -c 'import torch, numpy' || { echo "needs PyTorch and numpy"; exit 1; }
NGPU=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
[ "$NGPU" -ge 1 ] || { echo "no GPU: nvidia-smi lists none"; exit 3; }
{
    nvidia-smi --query-gpu=index,name,driver_version,memory.used,memory.total --format=csv,noheader
    [ "$NGPU" -ge 2 ] && nvidia-smi topo -m
    free -g | head -2
    echo "== $NGPU GPU(s); $GIB GiB, $CYCLES cycles"
} 2>&1 | tee "$LOG"

echo "== two contexts on one GPU, vram run --swap" | tee -a "$LOG"
python3 bench/gpu/multi_bench.py ctx "$B/vram" "$HALF" "$CYCLES" 2>&1 | tee -a "$LOG"

# the daemon's models: one of two workers on one GPU always; over two GPUs
# where there are two
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $OUT/logs
host_budget = $((3 * GIB + 8))G
port_base = 24300

[model group1]
command = python3 $PWD/bench/gpu/multi_model.py workers --gib $HALF --workers 2
vram = $((GIB + 3))G
keep_alive = forever
preempt = no
start_timeout = 10m
CONF
PARTS=("two workers, 1 GPU (a group):group1")
if [ "$NGPU" -ge 2 ]; then
    for m in peer peerx group; do
        case $m in
        peer) cmd="peer --gib $GIB" env="" ;;
        peerx) cmd="peer --gib $GIB" env="env = PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" ;;
        group) cmd="workers --gib $GIB --workers 2" env="" ;;
        esac
        cat >>"$T/vram.conf" <<CONF

[model $m]
command = python3 $PWD/bench/gpu/multi_model.py $cmd
vram = $((GIB + 3))G
gpus = 2
keep_alive = forever
preempt = no
start_timeout = 10m
$env
CONF
    done
    PARTS+=("torch, peer access (cudaMalloc):peer:peer"
        "torch, peer access (expandable):peerx:peer"
        "two workers, 2 GPUs (a group):group")
else
    echo "== one GPU: the parts over two GPUs (peer access, a group over 2 GPUs) need two" | tee -a "$LOG"
fi
"$B/vram" serve --config "$T/vram.conf" >"$OUT/serve.log" 2>&1 &
D=$!
for _ in $(seq 1 100); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.1; done
echo "== through vram serve" | tee -a "$LOG"
python3 bench/gpu/multi_bench.py daemon "$B/vram" "$CYCLES" "${PARTS[@]}" 2>&1 | tee -a "$LOG"
"$B/vram" ps 2>&1 | tee -a "$LOG"
kill -TERM $D
for _ in $(seq 1 300); do kill -0 $D 2>/dev/null || break; sleep 0.1; done
kill -0 $D 2>/dev/null && { echo "vram serve did not stop in 30 s" | tee -a "$LOG"; kill -9 $D; }
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader | tee -a "$LOG"
echo
python3 bench/gpu/multi_bench.py table | tee -a "$LOG"
