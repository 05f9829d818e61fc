#!/bin/bash
# gpu_caps_multi.sh: the real-GPU checks of per-GPU caps (issue 21) on a
# machine with two GPUs or more (kind nvidia-h200-x2): PyTorch under `vram
# run --gpus 0,1 --vram 4G` (default allocator and expandable segments,
# whose cuMemCreate names the device in its properties), `--vram
# 0:4G,1:2G`, `--gpus 2`, and VRAM_CAP=4G without vram run. Each device
# must say 4 GiB (or its own size) total and refuse past it, on its own.
# Expects .devbuild/ from bench/build_for_device.sh. A table on stdout, the
# runs' output in $OUT.
set -u
B=${1:-.devbuild}
OUT=${OUT:-/tmp/vram-out}
mkdir -p "$OUT"
PY=${PY:-python3}
pass=0 fail=0
check() { # NAME JSON JQ-CONDITION
    if echo "$2" | jq -e "$3" >/dev/null 2>&1; then
        pass=$((pass + 1)); printf '%-70s PASS\n' "$1"
    else
        fail=$((fail + 1)); printf '%-70s FAIL  %s\n' "$1" "$(echo "$2" | head -c 400)"
    fi
}
last_json() { grep '^{' | tail -1; }
G4=$((4 << 30)) G2=$((2 << 30))

for alloc in default expandable; do
    env=()
    [ $alloc = expandable ] && env=(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
    J=$(env "${env[@]}" "$B/vram" run --gpus 0,1 --vram 4G -- "$PY" bench/gpu/caps_multi_torch.py 3 1.5 \
        2>"$OUT/caps_multi_$alloc.err" | tee "$OUT/caps_multi_$alloc.out" | last_json)
    check "$alloc: two devices, each 4 GiB total (mem_get_info, props, NVML)" "$J" \
        "[.devices[] | .total == $G4 and .props_total == $G4 and .nvml_total == $G4] == [true, true]"
    check "$alloc: 3 GiB allocates on each" "$J" '[.devices[].size] == ["ok", "ok"]'
    check "$alloc: 1.5 GiB more is refused on each" "$J" \
        '[.devices[].more] == ["OutOfMemoryError", "OutOfMemoryError"]'
done

J=$("$B/vram" run --gpus 0,1 --vram 0:4G,1:2G -- "$PY" bench/gpu/caps_multi_torch.py 1 1.5 \
    2>"$OUT/caps_multi_keyed.err" | last_json)
check "--vram 0:4G,1:2G: 4 GiB and 2 GiB" "$J" "[.devices[].total] == [$G4, $G2]"
check "the 4 GiB device takes 1.5 GiB more, the 2 GiB one does not" "$J" \
    '[.devices[].more] == ["ok", "OutOfMemoryError"]'

J=$("$B/vram" run --gpus 2 --vram 4G -- "$PY" bench/gpu/caps_multi_torch.py 3 1.5 2>/dev/null | last_json)
check "--gpus 2: two devices of 4 GiB" "$J" "[.devices[].total] == [$G4, $G4]"

J=$(LD_PRELOAD="$(realpath "$B/libvramcap.so")" VRAM_CAP=4G CUDA_VISIBLE_DEVICES=0,1 \
    "$PY" bench/gpu/caps_multi_torch.py 3 1.5 2>/dev/null | last_json)
check "VRAM_CAP=4G alone: each device its own 4 GiB" "$J" \
    "[.devices[] | .total == $G4 and .size == \"ok\" and .more == \"OutOfMemoryError\"] == [true, true]"

# a process given GPU 0 only that widens what it sees gets nothing on GPU 1
U1=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 1)
U0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0)
J=$("$B/vram" run --gpu 0 --vram 4G -- env CUDA_VISIBLE_DEVICES="$U0,$U1" \
    "$PY" bench/gpu/caps_multi_torch.py 1 0.5 2>"$OUT/caps_multi_widen.err" | last_json)
check "a GPU it was not given: refused" "$J" '.devices[0].size == "ok" and .devices[1].size != "ok"'
grep -q "is not one of the 1 GPU this process was given" "$OUT/caps_multi_widen.err" &&
    { pass=$((pass + 1)); printf '%-70s PASS\n' "and libvramcap says why"; } ||
    { fail=$((fail + 1)); printf '%-70s FAIL\n' "and libvramcap says why"; }
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
