#!/bin/bash
# gpu_discover.sh: issue 33 on a real GPU. Three GGUF files with the shapes
# of real models and zero weights (bench/mkgguf.py, sparse: no disk), in a
# Hugging Face cache made here, served by `vram serve` with nothing but
# `discover = huggingface` and a budget that holds one of them at a time,
# through a real llama-server (LLAMA_SERVER). Requests (greedy, seed 42,
# streamed) go to each model once (cold starts), then ROUNDS rounds of all
# three in turn: every request finds its model suspended, and fast swap
# switches. Then the same files Ollama's way: llama-server stopped and
# started for each request, with the -c and -ngl vram chose. Reports the
# time to first token after a switch both ways, whether every answer is the
# model's first, how each was suspended (fast swap), and the -c/-ngl vram
# fit chose; logs in $OUT, a short table last.
#   LLAMA_SERVER   llama-server built with CUDA (required)
#   MODELS         mkgguf.py names (default: llama8b-q8_0 qwen7b-q8_0 llama8b-q4_k_m,
#                  each 7-10 GiB at 8192 tokens)
#   BUDGET         the models' budget on GPU 0 (default 12G: one at a time)
#   CTX ROUNDS     discover_ctx (8192), rounds of switches (3)
#   VRAM_BIN_DIR   vram and libvramcap.so (default .devbuild: bench/build_for_device.sh)
# One GPU (vram places discovered models on any GPU: with more, the budget
# of GPU 0 alone would not make them take turns). A dry run on the
# simulated driver, with the stand-in llama-server:
#   VRAM_SIM=examples/workstation.json LD_LIBRARY_PATH=build/sim VRAM_BIN_DIR=build \
#   LLAMA_SERVER=tests/helpers/fake-llama-server VRAM=$PWD/build/vram TESTMODEL=$PWD/build/tests/testmodel \
#   ASAN_OPTIONS=verify_asan_link_order=0 FAKE_LLAMA_SCALE=8 MODELS="tiny-f16 tiny-q8_0 tiny-q4_k_m" \
#   BUDGET=700M CTX=2048 ROUNDS=2 \
#   bash bench/gpu_discover.sh
set -u
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
SRC=$(cd "$(dirname "$0")/.." && pwd)
: "${LLAMA_SERVER:?set LLAMA_SERVER to a llama-server built with CUDA}"
LLAMA_SERVER=$(realpath "$LLAMA_SERVER")
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=$(realpath "${VRAM_BIN_DIR:-$SRC/.devbuild}")
MODELS=${MODELS:-llama8b-q8_0 qwen7b-q8_0 llama8b-q4_k_m}
BUDGET=${BUDGET:-12G} CTX=${CTX:-8192} ROUNDS=${ROUNDS:-3}
LISTEN=${LISTEN:-11800} DIRECT=${DIRECT:-11801}
W=$(mktemp -d)
export HOME=$W/home VRAM_SOCKET=$W/vram.sock
unset OLLAMA_MODELS HF_HOME HF_HUB_CACHE XDG_CACHE_HOME LLAMA_CACHE
D=
trap '[ -n "$D" ] && kill -TERM $D 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT

# a Hugging Face cache: models--bench--MODEL-GGUF/snapshots/REV/MODEL-QUANT.gguf
REV=0123456789abcdef0123456789abcdef01234567
NAMES="" SPECS=""
declare -A FILE
for m in $MODELS; do
    model=${m%-*} quant=${m##*-}
    repo="$HOME/.cache/huggingface/hub/models--bench--$model-GGUF"
    mkdir -p "$repo/refs" "$repo/snapshots/$REV"
    printf '%s' "$REV" >"$repo/refs/main"
    python3 "$SRC/bench/mkgguf.py" "$repo/snapshots/$REV" "$m" | tee -a "$OUT/discover-files.log"
    NAMES="$NAMES bench/$model-GGUF:${quant^^}"
    FILE[bench/$model-GGUF:${quant^^}]="$repo/snapshots/$REV/$m.gguf"
done

cat >"$W/vram.conf" <<CONF
[serve]
socket = $W/vram.sock
state = $W/vram.db
logs = $OUT/discover-logs
budget = 0:$BUDGET
port_base = 24800
listen = 127.0.0.1:$LISTEN
wait = 10m
discover = huggingface
discover_ctx = $CTX
llama_server = $LLAMA_SERVER
CONF
cp "$W/vram.conf" "$OUT/discover-vram.conf"
"$B/vram" serve --check --config "$W/vram.conf" | tee "$OUT/discover-check.log"
"$B/vram" serve --config "$W/vram.conf" >"$OUT/discover-serve.log" 2>&1 &
D=$!
for _ in $(seq 1 200); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.05; done
"$B/vram" ps | tee "$OUT/discover-ps-before.txt"

# 1. through vram serve: cold starts, then switches by fast swap
python3 "$SRC/bench/gpu/discover_bench.py" proxy "http://127.0.0.1:$LISTEN" "$ROUNDS" $NAMES \
    >"$OUT/discover-requests.jsonl" 2>"$OUT/discover-bench.err"
"$B/vram" ps | tee "$OUT/discover-ps-after.txt"
"$B/vram" ps --json >"$OUT/discover-ps.json"
# the -c and -ngl vram chose, for the reload run and for vram fit
for n in $NAMES; do
    read -r ctx ngl < <(python3 -c 'import json, sys
m = [m for m in json.load(open(sys.argv[1]))["models"] if m["name"] == sys.argv[2]][0]
print(m["ctx"], m["ngl"])' "$OUT/discover-ps.json" "$n")
    file=${FILE[$n]}
    SPECS="$SPECS $n=$file:$ctx:$ngl"
    "$B/vram" fit --vram "$BUDGET" --ctx "$ctx" --ngl "$ngl" "$file" >>"$OUT/discover-fit.txt" 2>&1
done
kill -TERM $D
wait $D 2>/dev/null
D=

# 2. Ollama's way: stop one llama-server, start the next, on the same files
RELOAD_LOG="$OUT/discover-reload-server.log" python3 "$SRC/bench/gpu/discover_bench.py" reload \
    "$LLAMA_SERVER" "$DIRECT" "$ROUNDS" $SPECS >>"$OUT/discover-requests.jsonl" 2>>"$OUT/discover-bench.err"

grep -E "llama-server with|suspended|resumed|ready|failed" "$OUT/discover-serve.log" >"$OUT/discover-events.log"
cat "$OUT/discover-events.log" "$OUT/discover-bench.err"
echo
python3 - "$OUT/discover-requests.jsonl" "$OUT/discover-ps.json" "$OUT/discover-serve.log" <<'PY'
import json, re, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ps = json.load(open(sys.argv[2]))["models"]
first = {r["model"]: r["content"] for r in rows if r["phase"] == "cold"}
first.update({r["model"]: first.get(r["model"], r["content"]) for r in rows if r["phase"] == "reload-first"})
swaps = [float(x) for x in re.findall(r"suspended: fast swap \(([0-9.]+) s\)", open(sys.argv[3]).read())]
resumes = [float(x) for x in re.findall(r"resumed: GPU \S+ \(([0-9.]+) s\)", open(sys.argv[3]).read())]
print("model                        -c     -ngl    GiB(now)  suspended_by")
for m in ps:
    print(f"{m['name']:28} {m['ctx'] or '-':<6} {str(m['ngl']) + '/' + str(m['layers']):7} "
          f"{(m['vram_bytes'] or m['host_bytes']) / 2**30:8.2f}  {m['suspended_by'] or '-'}")
print()
print("path                          n  ttft_p50_s  ttft_max_s  answers_as_first")
for phase, label in (("cold", "vram: cold start"), ("swap", "vram: switch by fast swap"),
                     ("reload-first", "ollama way: first load"), ("reload", "ollama way: stop + start")):
    rs = [r for r in rows if r["phase"] == phase]
    if not rs:
        continue
    t = [r["ttft_s"] for r in rs]
    same = sum(r["content"] == first.get(r["model"]) for r in rs)
    print(f"{label:28} {len(rs):2}  {statistics.median(t):10.3f}  {max(t):10.3f}  {same}/{len(rs)}")
if swaps and resumes:
    print(f"\nfast swap: suspend median {statistics.median(swaps):.3f} s, resume median "
          f"{statistics.median(resumes):.3f} s ({len(swaps)} and {len(resumes)})")
PY
