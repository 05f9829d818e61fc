#!/bin/bash
# gpu_import.sh: a llama-swap configuration, imported (vram import
# llama-swap) and served on a real GPU by llama-server: three models named
# as people name them (a Hugging Face id, Ollama's name:tag), macros, ttl 0
# and 300, cmdStop, an alias; zero-weight GGUFs of real shapes
# (bench/mkgguf.py, sparse). Run once as imported (max_loaded = 1: one at a
# time, as llama-swap runs them) and once without max_loaded (vram keeps
# what fits): per model, the first answer (a cold start) and the second
# (after the others took their turn: a resume, or already there), through
# the proxy (OpenAI's route by name, Ollama's by the alias).
#   LLAMA_SERVER  llama-server built with CUDA (required on the GPU machine)
#   VRAM          vram binary (default .devbuild/vram)
#   DRY=1         on the simulated driver, test models for llama-server
#                 (from a build here: build/vram, build/tests/testmodel)
# Writes $OUT/import.log (both daemons' logs, the imported files); prints
# a table last.
set -u
. "$(dirname "$0")/serve_user.sh" # as root, the models run as vram-model
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
T=$(mktemp -d)
export VRAM_SOCKET=$T/vram.sock
if [ -n "${DRY:-}" ]; then
    VRAM=${VRAM:-build/vram}
    export VRAM_SIM=$PWD/tests/fixtures/machines/two-16g.json LD_LIBRARY_PATH=$PWD/build/sim
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" # libvramcap after ASan
    mkdir -p "$T/bin"
    printf '#!/bin/sh\nexec %s/build/tests/testmodel --bytes 1G --chunks 2 --chunk-ms 5\n' "$PWD" >"$T/bin/llama-server"
    chmod +x "$T/bin/llama-server"
    LLAMA_SERVER=$T/bin/llama-server
fi
VRAM=${VRAM:-.devbuild/vram}
: "${LLAMA_SERVER:?set LLAMA_SERVER to a llama-server built with CUDA (or DRY=1)}"
python3 bench/mkgguf.py "$T/gguf" qwen7b-q4_k_m llama8b-q4_k_m llama1b-f16 >/dev/null || exit 1
cat >"$T/config.yaml" <<YAML
macros:
  server: "$LLAMA_SERVER --port \${PORT} -ngl 99 -c 4096"
  dir: "$T/gguf"
models:
  "Qwen/Qwen2.5-7B-Instruct":
    cmd: \${server} -m \${dir}/qwen7b-q4_k_m.gguf
    aliases: ["qwen2.5:7b"]
    ttl: 0
  "llama3.1:8b":
    cmd: \${server} -m \${dir}/llama8b-q4_k_m.gguf
    cmdStop: kill -TERM \${PID}
    ttl: 300
  "llama3.2:1b":
    cmd: |
      # small and quick
      \${server}
      -m \${dir}/llama1b-f16.gguf
YAML
PORT=$((24000 + RANDOM % 1000))
"$VRAM" import llama-swap "$T/config.yaml" --listen "127.0.0.1:$PORT" >"$T/once.conf" 2>"$T/notes" || {
    cat "$T/notes"
    exit 1
}
sed -i "/^\[serve\]/a socket = $T/vram.sock\nstate = $T/vram.db\nlogs = $OUT/import-logs\nport_base = $((PORT + 1))" "$T/once.conf"
grep -v '^max_loaded' "$T/once.conf" >"$T/fit.conf"
P="http://127.0.0.1:$PORT"
ms() { python3 -c "import sys,time; print(int((time.time()-float(sys.argv[1]))*1000))" "$1"; }
chat() { curl -s -m 600 -o /dev/null -w '%{http_code}' "$P/v1/chat/completions" \
    -d "{\"model\":\"$1\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"; }
ollama() { curl -s -m 600 -o /dev/null -w '%{http_code}' "$P/api/chat" \
    -d "{\"model\":\"$1\",\"stream\":false,\"options\":{\"num_predict\":8},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"; }
MODELS="Qwen/Qwen2.5-7B-Instruct llama3.1:8b llama3.2:1b"
: >"$T/table"
for run in once fit; do
    "$VRAM" serve --check --config "$T/$run.conf" >>"$OUT/import.log" 2>&1 || { echo "$run: --check refused"; exit 1; }
    "$VRAM" serve --config "$T/$run.conf" >"$T/$run.log" 2>&1 &
    D=$!
    for _ in $(seq 1 100); do curl -s -m 1 -o /dev/null "$P/v1/models" && break; sleep 0.1; done
    for round in 1 2; do
        for m in $MODELS; do
            t=$(date +%s.%N)
            if [ "$m" = Qwen/Qwen2.5-7B-Instruct ] && [ $round = 2 ]; then
                c=$(ollama qwen2.5:7b) # Ollama's route, by its alias
            else
                c=$(chat "$m")
            fi
            echo "$run $round $m $c $(ms "$t")" >>"$T/table"
        done
    done
    "$VRAM" ps >>"$T/table.ps" 2>&1
    kill -TERM $D
    wait $D
    { echo "== $run.conf"; cat "$T/$run.conf"; echo "== $run: the daemon's log"; cat "$T/$run.log"; } >>"$OUT/import.log"
done
{ echo "== notes"; cat "$T/notes"; echo "== vram ps at the end of each run"; cat "$T/table.ps"; } >>"$OUT/import.log"
echo "run   round  model                       status  ms"
awk '{ printf "%-5s %-6s %-27s %-7s %s\n", $1, $2, $3, $4, $5 }' "$T/table"
echo "(once: as imported, max_loaded = 1; fit: without it. round 1: cold starts; round 2: after the others' turn)"
rm -rf "$T"
