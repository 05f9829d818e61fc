#!/bin/bash
# fit_hostile.sh: how long `vram fit` takes, and how much memory, on hostile
# files: a 200 MiB config.json, 100 MiB safetensors headers (the format's
# limit: one long string, 50 million numbers, 13 million small objects, and
# 2.3 million real tensor entries, the densest legal header), a GGUF whose
# header is 16 million empty strings, and a FIFO. Medians of RUNS (5) runs,
# beside reading the same file once with cat (from the page cache): the time
# any tool needs to see every byte.
#   VRAM  the binary (default build-rel/vram, a release build)
set -u
VRAM=${VRAM:-build-rel/vram}
RUNS=${RUNS:-5}
T=$(mktemp -d /tmp/vram-hostile-XXXXXX)
trap 'rm -rf "$T"' EXIT
printf '{"a": [' >"$T/config.json" && truncate -s 200M "$T/config.json"
python3 - "$T" <<'PY'
import struct, sys
t = sys.argv[1]
def header(name, body):
    body += b" " * ((100 << 20) - len(body))
    with open(f"{t}/{name}.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(body)) + body)
header("string", b'{"__metadata__":{"x":"' + b"y" * ((100 << 20) - 30) + b'"}}')
header("numbers", b'{"__metadata__":{"x":[' + b"0," * (((100 << 20) - 40) // 2) + b'0]}}')
header("objects", b'{"__metadata__":[' + b'{"a":1},' * (((100 << 20) - 40) // 8) + b'{}]}')
one = b'"m.layers.1.w%08d":{"dtype":"F16","shape":[0],"data_offsets":[0,0]},'
n = ((100 << 20) - 10) // len(one % 0)
header("tensors", b"{" + b"".join(one % i for i in range(n))[:-1] + b"}")
n = (128 << 20) // 8 - 8
with open(f"{t}/strings.gguf", "wb") as f:
    key = b"tokenizer.ggml.tokens"
    f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key)
    f.write(struct.pack("<IIQ", 9, 8, n))
    f.truncate(f.tell() + 8 * n)
PY
mkfifo "$T/fifo.gguf"
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%-24s %8s %10s %10s %10s %8s\n' file size "vram fit" "max RSS" "cat" ratio
for f in config.json string.safetensors numbers.safetensors objects.safetensors \
    tensors.safetensors strings.gguf fifo.gguf; do
    p="$T/$f"
    : >"$T/t" && : >"$T/m" && : >"$T/c"
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f '%e %M' -o "$T/one" timeout 10 "$VRAM" fit --vram 8G "$p" >/dev/null 2>&1
        read -r e m <<<"$(tail -1 "$T/one")"
        echo "$e" >>"$T/t" && echo "$m" >>"$T/m"
        if [ -f "$p" ]; then
            s=$(date +%s.%N) && cat "$p" >/dev/null && echo "$(date +%s.%N) - $s" | bc >>"$T/c"
        fi
    done
    e=$(median <"$T/t") && m=$(median <"$T/m")
    c=$( [ -s "$T/c" ] && median <"$T/c" || echo 0)
    size=$( [ -f "$p" ] && du -h --apparent-size "$p" | cut -f1 || echo fifo)
    ratio=$(awk -v e="$e" -v c="$c" 'BEGIN { if (c > 0) printf "%.1fx", e / c; else print "-" }')
    printf '%-24s %8s %9.2fs %7d KiB %9.3fs %8s\n' "$f" "$size" "$e" "$m" "$c" "$ratio"
done
