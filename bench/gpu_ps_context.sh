#!/bin/bash
# gpu_ps_context.sh (issue 44): on a real GPU, what vram ps says of a model
# suspended by fast swap (its process's CUDA context stays on the GPU:
# vram_bytes should be what nvidia-smi shows that process holding, not 0),
# and the reason an eviction gives (vram ps --json's "evicted"). Two
# PyTorch "models" of 4 GiB (bench/gpu/serve_model.py) under a 6 GiB
# budget on GPU 0: loading the second evicts the first. Expects .devbuild/
# (bench/build_for_device.sh: vram, libvramcap.so). Logs in $OUT; a short
# table last.
set -u
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
B=$PWD/.devbuild
T=$(mktemp -d)
export VRAM_SOCKET=$T/vram.sock VRAM_SHIM=$B/libvramcap.so
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $OUT/logs
budget = 0:6G
port_base = 24300
CONF
for m in a b; do
    printf '\n[model %s]\ncommand = python3 %s/bench/gpu/serve_model.py --gib 4\nvram = 5G\ngpu = 0\nswap = fast\nkeep_alive = forever\nstart_timeout = 5m\n' \
        "$m" "$PWD" >>"$T/vram.conf"
done
"$B/vram" serve --config "$T/vram.conf" >"$OUT/serve.log" 2>&1 &
D=$!
for _ in $(seq 1 100); do "$B/vram" ps >/dev/null 2>&1 && break; sleep 0.1; done
field() { "$B/vram" ps --json | python3 -c "import json,sys; m=[m for m in json.load(sys.stdin)['models'] if m['name']=='$1'][0]; print(json.dumps(m$2) if isinstance(m$2, (dict, list)) or m$2 is None else m$2)"; }
{
    "$B/vram" load a --timeout 5m
    "$B/vram" load b --timeout 5m
    sleep 2 # the sampler's next look at the driver
    PID=$(field a "['pid']")
    SMI=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -F', ' -v p="$PID" '$1 == p {print $2}')
    PS=$(field a "['vram_bytes']")
    echo "a: state $(field a "['state']"), pid $PID, vram ps $((PS / 1048576)) MiB, nvidia-smi ${SMI:-0} MiB"
    echo "a: evicted $(field a "['evicted']")"
    "$B/vram" ps
    nvidia-smi
} >"$OUT/ps_context.log" 2>&1
kill -TERM $D
wait $D
cat "$OUT/ps_context.log" | grep '^a: '
printf '\n%-40s %s\n' "check" "value"
printf '%-40s %s\n' "suspended a: vram ps VRAM (MiB)" "$((PS / 1048576))"
printf '%-40s %s\n' "suspended a: nvidia-smi used (MiB)" "${SMI:-0}"
printf '%-40s %s\n' "they agree (within 64 MiB)" "$([ $(( (PS / 1048576) - ${SMI:-0} )) -le 64 ] && [ $(( ${SMI:-0} - (PS / 1048576) )) -le 64 ] && echo yes || echo NO)"
printf '%-40s %s\n' "a's eviction reason names b" "$(grep -q '"for": *"b"' <(field a "['evicted']") && echo yes || echo NO)"
