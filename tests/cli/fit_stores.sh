#!/bin/sh
# vram fit on the models people have: found by name in an Ollama store, a
# Hugging Face cache and an LM Studio folder laid out here as those tools lay
# them out; all of them listed with whether they fit now, after suspending
# or stopping what, or not at all; vram serve's measured footprints; hostile
# stores and files (links out of the store, FIFOs, huge manifests and
# headers) refused with exit 2, promptly, in bounded memory.
. "$(dirname "$0")/lib.sh"
: "${MKMODEL:?}"
CFG="$SRC/tests/fixtures/configs"
export HOME="$T/home"
unset OLLAMA_MODELS HF_HOME HF_HUB_CACHE XDG_CACHE_HOME
run() { OUT=$("$@" 2>&1); RC=$?; }
# a command that could hang (a FIFO opened) is stopped after 10 s: exit 124
bounded() { OUT=$(timeout 10 "$@" 2>&1); RC=$?; }

# Ollama: ~/.ollama/models/{manifests/HOST/NS/MODEL/TAG, blobs/sha256-HEX}
O="$HOME/.ollama/models"
D=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkdir -p "$O/blobs" "$O/manifests/registry.ollama.ai/library/llama3.1"
"$MKMODEL" gguf "$O/blobs/sha256-$D"
manifest() { # DIGEST: the manifest Ollama writes, with the model layer's digest
    printf '{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json",'
    printf '"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:%s","size":485},' "$D"
    printf '"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"%s","size":4065132544},' "$1"
    printf '{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:%s","size":1481}]}' "$D"
}
manifest "sha256:$D" >"$O/manifests/registry.ollama.ai/library/llama3.1/8b"

run "$VRAM" fit --vram 16G llama3.1:8b
expect_eq "Ollama: a model by its name: exit 0" "$RC" 0
expect_match "read from Ollama's store, run by llama.cpp" "$OUT" \
    '^llama3.1:8b \(llama, .* stored q4_k, ollama, 3.79 GiB on disk\)   llamacpp, context 4096 tokens'
expect_match "every layer fits 16 GiB" "$OUT" 'all 33 layers fit at 4096 tokens'
OLLAMA_MODELS="$T/elsewhere" run "$VRAM" fit --vram 16G llama3.1:8b
expect_eq "OLLAMA_MODELS replaces the default places" "$RC" 2

# the Hugging Face cache: hub/models--ORG--NAME/{refs/main, blobs/, snapshots/REV/}
R="$HOME/.cache/huggingface/hub/models--acme--tiny-12L"
REV=0123456789abcdef0123456789abcdef01234567
"$MKMODEL" shards "$T/shards" 12
mkdir -p "$R/refs" "$R/blobs" "$R/snapshots/$REV"
printf '%s' "$REV" >"$R/refs/main"
for f in "$T/shards"/*; do
    b=$(basename "$f")
    cp --sparse=always "$f" "$R/blobs/blob-$b"
    ln -s "../../blobs/blob-$b" "$R/snapshots/$REV/$b"
done
run "$VRAM" fit --json --vram 16G acme/tiny-12L
expect_eq "HF cache: a repository by its name, through the snapshot's links" \
    "$(echo "$OUT" | jq -c '.models[0] | [.name, .source, .runtime, .params, .layers]')" \
    '["acme/tiny-12L","huggingface","torch",201326592,12]'
HF_HOME="$T/hf" run "$VRAM" fit --vram 16G acme/tiny-12L
expect_eq "HF_HOME moves the cache" "$RC" 2
mkdir -p "$T/hf"
mv "$HOME/.cache/huggingface/hub" "$T/hf/hub"
HF_HOME="$T/hf" run "$VRAM" fit --vram 16G acme/tiny-12L
expect_eq "HF_HOME/hub is where it looks then" "$RC" 0
HF_HUB_CACHE="$T/hf/hub" HF_HOME="$T/nothing" run "$VRAM" fit --vram 16G acme/tiny-12L
expect_eq "HF_HUB_CACHE comes first" "$RC" 0
mv "$T/hf/hub" "$HOME/.cache/huggingface/hub"

# LM Studio: ~/.lmstudio/models/PUBLISHER/REPO/FILE.gguf, projectors beside
L="$HOME/.lmstudio/models/lmstudio-community/Tiny-GGUF"
mkdir -p "$L"
"$MKMODEL" gguf "$L/Tiny-Q4_K_M.gguf" 2
"$MKMODEL" gguf "$L/mmproj-Tiny-f16.gguf" 1
run "$VRAM" fit --vram 16G lmstudio-community/Tiny-GGUF
expect_match "LM Studio: publisher/repo, its one model file (the projector aside)" "$OUT" \
    '^lmstudio-community/Tiny-GGUF \(llama, .*, lmstudio, 2.1[0-9] GiB on disk\)'

# a repository of several GGUF files (bartowski's layout): the name alone
# lists them; REPO:QUANT (llama.cpp's -hf, Ollama's hf.co names) picks one
B="$HOME/.cache/huggingface/hub/models--bartowski--Tiny-GGUF"
mkdir -p "$B/refs" "$B/blobs" "$B/snapshots/$REV"
printf '%s' "$REV" >"$B/refs/main"
"$MKMODEL" gguf "$B/blobs/q4" 2
"$MKMODEL" gguf "$B/blobs/q8" 3
ln -s ../../blobs/q4 "$B/snapshots/$REV/Tiny-Q4_K_M.gguf"
ln -s ../../blobs/q8 "$B/snapshots/$REV/Tiny-Q8_0.gguf"
run "$VRAM" fit --vram 16G bartowski/Tiny-GGUF
expect_eq "several GGUF files, none named: exit 2" "$RC" 2
expect_match "lists them, by the names that pick them, with their sizes" "$OUT" \
    'bartowski/Tiny-GGUF: 2 GGUF models; name one: bartowski/Tiny-GGUF:Q4_K_M \(2.1[0-9] GiB\), bartowski/Tiny-GGUF:Q8_0 \(3.1[0-9] GiB\)'
run "$VRAM" fit --vram 16G bartowski/Tiny-GGUF:Q4_K_M
expect_eq "REPO:Q4_K_M: exit 0" "$RC" 0
expect_match "REPO:Q4_K_M: that file, from the cache" "$OUT" \
    '^bartowski/Tiny-GGUF:Q4_K_M \(llama, .*huggingface, 2.1[0-9] GiB on disk\)   llamacpp'
run "$VRAM" fit --vram 16G bartowski/Tiny-GGUF:q8_0
expect_match "the tag in any case" "$OUT" '^bartowski/Tiny-GGUF:Q8_0 \(llama, .*3.1[0-9] GiB on disk'
run "$VRAM" fit --vram 16G bartowski/Tiny-GGUF:Q5_K_M
expect_match "a tag it does not have: says which it has" "$OUT" \
    'no GGUF model answers to Q5_K_M: bartowski/Tiny-GGUF:Q4_K_M .*, bartowski/Tiny-GGUF:Q8_0'
J=$("$VRAM" fit --json --vram 16G --ctx 128k bartowski/Tiny-GGUF:Q4_K_M)
expect_eq "--ctx 128k is 131072 tokens" "$(echo "$J" | jq '.options.ctx')" 131072
run "$VRAM" fit --vram 16G --ctx 128q bartowski/Tiny-GGUF:Q4_K_M
expect_eq "--ctx 128q: exit 2" "$RC" 2
expect_match "--ctx 128q: says what a count of tokens is" "$OUT" "like 8192 or 128k"
# a partial offload, said once: at 131072 tokens 16 GiB holds some layers
# (fits, exit 0); 2 GiB holds none (fits nowhere, exit 1), never both
run "$VRAM" fit --vram 16G --ctx 131072 bartowski/Tiny-GGUF:Q8_0
expect_match "131072 tokens on 16 GiB: fits now with -ngl N" "$OUT" \
    'fits now with -ngl [0-9]+ of 33 on GPU 0 .*; every layer with --ctx [0-9]+'
expect_eq "... and not also 'fits nowhere'" "$(echo "$OUT" | grep -c 'fits nowhere')" 0
expect_eq "... exit 0" "$RC" 0
expect_eq "JSON: verdict partial" \
    "$("$VRAM" fit --json --vram 16G --ctx 131072 bartowski/Tiny-GGUF:Q8_0 | jq -r '.models[0].verdict')" partial
run "$VRAM" fit --vram 1G --ctx 131072 bartowski/Tiny-GGUF:Q8_0
expect_match "1 GiB: fits nowhere" "$OUT" '^  fits nowhere$'
expect_eq "... and no -ngl said to fit" "$(echo "$OUT" | grep -c 'fits now with')" 0
expect_eq "... exit 1" "$RC" 1

# llama.cpp's own cache: the flat files it wrote (OWNER_REPO_FILE.gguf and
# manifest=OWNER=REPO=TAG.json), and the Hugging Face layout it writes under
# LLAMA_CACHE now
C="$HOME/.cache/llama.cpp"
mkdir -p "$C"
"$MKMODEL" gguf "$C/unsloth_Small-GGUF_Small-UD-Q4_K_XL.gguf" 1
echo '{}' >"$C/manifest=unsloth=Small-GGUF=UD-Q4_K_XL.json"
run "$VRAM" fit --vram 16G unsloth/Small-GGUF:UD-Q4_K_XL
expect_match "llama.cpp's cache: by its -hf name" "$OUT" \
    '^unsloth/Small-GGUF:UD-Q4_K_XL \(llama, .*llamacpp, 1.1[0-9] GiB on disk\)'
mkdir -p "$T/lc/models--ggml-org--New-GGUF/refs" "$T/lc/models--ggml-org--New-GGUF/snapshots/$REV"
printf '%s' "$REV" >"$T/lc/models--ggml-org--New-GGUF/refs/main"
"$MKMODEL" gguf "$T/lc/models--ggml-org--New-GGUF/snapshots/$REV/New-Q4_0.gguf" 1
LLAMA_CACHE="$T/lc" run "$VRAM" fit --vram 16G ggml-org/New-GGUF:Q4_0
expect_match "LLAMA_CACHE in the Hugging Face layout" "$OUT" '^ggml-org/New-GGUF:Q4_0 \(llama, .*llamacpp'
LLAMA_CACHE="$T/lc" run "$VRAM" fit --vram 16G unsloth/Small-GGUF:UD-Q4_K_XL
expect_eq "LLAMA_CACHE replaces ~/.cache/llama.cpp" "$RC" 2

# no model: every local model, what it needs, whether it fits
run "$VRAM" fit --vram 6G
expect_eq "the list: exit 0" "$RC" 0
expect_match "lists Ollama's model: fits now" "$OUT" '^llama3.1:8b +ollama +3.79 GiB +[0-9.]+ GiB llamacpp  now: GPU 0'
expect_match "lists the cache's repository" "$OUT" '^acme/tiny-12L +huggingface '
expect_match "lists LM Studio's file, not its projector" "$OUT" \
    '^lmstudio-community/Tiny-GGUF/Tiny-Q4_K_M.gguf +lmstudio'
expect_eq "no projector listed" "$(echo "$OUT" | grep -c mmproj)" 0
expect_match "lists each GGUF of a repository by its REPO:QUANT" "$OUT" '^bartowski/Tiny-GGUF:Q8_0 +huggingface +3.1[0-9] GiB'
expect_match "lists llama.cpp's cache" "$OUT" '^unsloth/Small-GGUF:UD-Q4_K_XL +llamacpp '
expect_match "says it looked in llama.cpp's cache" "$OUT" "llama.cpp cache \\($HOME/.cache/llama.cpp\\)"
run "$VRAM" fit --vram 3G
expect_match "3 GiB: Ollama's model fits with some layers on the GPU, and says how many" "$OUT" \
    '^llama3.1:8b .*now: GPU 0 with -ngl [0-9]+ of 33'
run "$VRAM" fit --vram 512M
expect_match "512 MiB: not one layer fits, and it says so" "$OUT" \
    '^llama3.1:8b .*no: the largest GPU has 0.50 GiB'
J=$("$VRAM" fit --json --vram 6G)
expect_eq "JSON list: the three stores" \
    "$(echo "$J" | jq -c '[.listing, ([.models[].source] | sort)]')" \
    '[true,["huggingface","huggingface","huggingface","llamacpp","lmstudio","ollama"]]'

# what would make room, on the simulated workstation (13.9 GiB free): a job
# holding 10 GiB is in the way of a model that needs more than what is left
export VRAM_SIM="$WS" LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
start_job hog --bytes 10G || not_ok "the job started"
run "$VRAM" fit --ctx 4096 llama3.1:8b
expect_match "some layers now, every layer after stopping the job that holds 10 GiB (named, with its PID)" "$OUT" \
    "fits now with -ngl [0-9]+ of 33 on GPU 0 .*; every layer on GPU 0 after stopping PID $JOB_PID simalloc \\(10.[0-9] GiB\\)"
expect_eq "fits with -ngl N: exit 0" "$RC" 0
run "$VRAM" fit --runtime torch --ctx 4096 llama3.1:8b
expect_match "PyTorch: after stopping the job (named, with its PID)" "$OUT" \
    "fits nowhere now; on GPU 0 after stopping PID $JOB_PID simalloc \\(10.[0-9] GiB\\)"
expect_eq "does not fit now: exit 1" "$RC" 1
HOG=$JOB_PID
# the same job as a model of vram serve: suspended rather than stopped, and
# what vram serve measured for the model shown and used
GPU=$("$VRAM" status --json | jq -r '.gpus[0].name')
cat >"$T/vram.conf" <<EOF
[serve]
state = $T/vram.db
[model hog]
command = sleep 1000
vram = 10G
[model llama8]
command = llama-server -m $O/blobs/sha256-$D --port \${PORT}
file = $O/blobs/sha256-$D
EOF
# the store as vram serve makes it: the SQL taken from src/app/store.c (its
# schema, and the columns added since), so the test follows the daemon's
python3 - "$T/vram.db" "$HOG" "$GPU" "$SRC/src/app/store.c" <<'EOF'
import re, sqlite3, sys
src = open(sys.argv[4]).read()
start = src.index("schema[] =")
schema = "".join(re.findall(r'"([^"]*)"', src[start:src.index(";\n", start)]))
db = sqlite3.connect(sys.argv[1])
db.executescript(schema)
for alter in re.findall(r'"(ALTER TABLE [^"]*)"', src):
    db.execute(alter)
db.execute("INSERT INTO footprints(model, gpu_name, bytes) VALUES('llama8', ?, ?)",
           (sys.argv[3], 5 << 30))
db.execute("INSERT INTO procs(model, pid, start, state, gpu, port, bytes, how) "
           "VALUES('hog', ?, 0, 'ready', 0, 21000, ?, '')", (int(sys.argv[2]), 10 << 30))
db.commit()
EOF
run "$VRAM" fit --config "$T/vram.conf" --ctx 4096 llama3.1:8b
expect_match "vram serve's measured footprint beside the estimate" "$OUT" \
    "measured by vram serve \\(as llama8\\) on $GPU: 5.00 GiB"
expect_match "after suspending vram serve's model, not stopping it" "$OUT" \
    'on GPU 0 after suspending hog \(vram serve, 10.[0-9] GiB\)'
run "$VRAM" fit --config "$T/vram.conf" --ctx 4096 llama8
expect_match "a model of vram serve by its name" "$OUT" '^llama8 \(llama, .*vram serve\)'
chmod 0 "$T/vram.db"
run "$VRAM" fit --config "$T/vram.conf" --ctx 4096 llama3.1:8b
expect_eq "a store it cannot read: still an answer" "$RC" 0
chmod 644 "$T/vram.db"
run "$VRAM" fit --config "$T/missing.conf" llama3.1:8b
expect_eq "--config that is not there: exit 2" "$RC" 2

unset VRAM_SIM

# hostile stores: exit 2, the path and the problem named, nothing read outside
mkdir -p "$T/outside"
mkfifo "$T/outside/fifo"
M="$O/manifests/registry.ollama.ai/library"
mkdir -p "$M/evil"
manifest "sha256:../../../../outside/fifo" >"$M/evil/digest"
bounded "$VRAM" fit --vram 8G evil:digest
expect_eq "a digest that is a path: exit 2" "$RC" 2
expect_match "says the digest is no digest" "$OUT" "evil/digest: the model layer's digest .* is not sha256:64 hex digits"
ln -s "$T/outside/fifo" "$M/evil/link"
bounded "$VRAM" fit --vram 8G evil:link
expect_eq "a manifest linked out of the store: exit 2" "$RC" 2
expect_match "says it leads outside" "$OUT" "evil/link: it leads outside the store"
ln -s ../../../../../../outside/fifo "$M/evil/rel"
bounded "$VRAM" fit --vram 8G evil:rel
expect_match "a relative link that climbs out: refused too" "$OUT" "evil/rel: it leads outside the store"
ln -s nothing-here "$M/evil/dangling"
bounded "$VRAM" fit --vram 8G evil:dangling
expect_eq "a dangling manifest link: exit 2" "$RC" 2
head -c 3000000 /dev/zero | tr '\0' ' ' >"$M/evil/huge"
bounded "$VRAM" fit --vram 8G evil:huge
expect_match "a huge manifest: refused by its size" "$OUT" "evil/huge: a manifest of 2.86 MiB"
manifest "sha256:$(echo $D | tr 0 f)" >"$M/evil/noblob"
bounded "$VRAM" fit --vram 8G evil:noblob
expect_match "a blob that is not there: named" "$OUT" "its model blob .*sha256-f123.*: No such file"
mkdir -p "$M/fifoblob" && manifest "sha256:$(echo $D | tr 1 e)" >"$M/fifoblob/1"
mkfifo "$O/blobs/sha256-$(echo $D | tr 1 e)"
bounded "$VRAM" fit --vram 8G fifoblob:1
expect_match "a blob that is a FIFO: refused, not opened" "$OUT" "a FIFO"
EV="$HOME/.cache/huggingface/hub/models--acme--evil/snapshots/$REV"
mkdir -p "$EV" && ln -s ../../../../../../outside/fifo "$EV/config.json"
bounded "$VRAM" fit --vram 8G acme/evil
expect_eq "a snapshot link out of the cache: exit 2, no hang on what it points to" "$RC" 2
expect_match "names the file and why" "$OUT" "models--acme--evil/snapshots/$REV/config.json: it leads outside the store"
rm "$EV/config.json" && ln -s ../../blobs/gone "$EV/config.json"
bounded "$VRAM" fit --vram 8G acme/evil
expect_match "a dangling snapshot link: named" "$OUT" "config.json: No such file or directory"
run "$VRAM" fit --vram 8G
expect_eq "the list with hostile entries: still exit 0" "$RC" 0
expect_match "shows what it could not read, and why" "$OUT" '^evil:link .*unreadable: .*leads outside the store'

# hostile files given by path: FIFOs refused without waiting
mkfifo "$T/m.gguf" "$T/config.json"
bounded "$VRAM" fit "$T/m.gguf"
expect_eq "a FIFO named .gguf: exit 2, not a hang" "$RC" 2
expect_match "says it is a FIFO" "$OUT" "m.gguf: a FIFO, not a regular file"
bounded "$VRAM" fit "$T/config.json"
expect_eq "a FIFO named config.json: exit 2" "$RC" 2
mkdir -p "$T/fifodir" && mkfifo "$T/fifodir/config.json"
bounded "$VRAM" fit "$T/fifodir"
expect_match "a folder whose config.json is a FIFO" "$OUT" "fifodir/config.json: a FIFO"
"$MKMODEL" shards "$T/fshards" 2
rm "$T/fshards/model-00002-of-00002.safetensors" && mkfifo "$T/fshards/model-00002-of-00002.safetensors"
bounded "$VRAM" fit "$T/fshards"
expect_match "a shard that is a FIFO" "$OUT" "model-00002-of-00002.safetensors: a FIFO"

# hostile sizes: answered at once, in bounded memory (RSS from /usr/bin/time,
# KiB); the times are printed, bench/fit_hostile.sh measures them
rss() { # FILE: exit code, max RSS in KiB, seconds
    /usr/bin/time -f '%x %M %e' -o "$T/time" timeout 10 "$VRAM" fit --vram 8G "$1" >/dev/null 2>&1
    cat "$T/time" | tail -1
}
# a 200 MiB config.json (44 s and 3.7 GiB of RAM before), sparse: it is
# refused by its size, whatever it holds
printf '{"a": [' >"$T/big-config.json" && truncate -s 200M "$T/big-config.json"
python3 - "$T" <<'EOF'
import struct, sys
t = sys.argv[1]
# a safetensors header at the format's limit: 100 MiB of JSON
head = b'{"__metadata__":{"x":"' + b"y" * ((100 << 20) - 30) + b'"}}'
head += b" " * ((100 << 20) - len(head))
with open(t + "/big-header.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head)
# a GGUF whose metadata is 16 million empty strings (128 MiB; the strings
# are the file's hole, read as zeros)
n = (128 << 20) // 8 - 8
with open(t + "/strings.gguf", "wb") as f:
    key = b"tokenizer.ggml.tokens"
    f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key)
    f.write(struct.pack("<IIQ", 9, 8, n))
    f.truncate(f.tell() + 8 * n)
EOF
for f in big-config.json big-header.safetensors strings.gguf; do
    set -- $(rss "$T/$f")
    echo "# $f: exit $1, $2 KiB, $3 s"
    expect_eq "$f: answered with exit 2 (not killed)" "$1" 2
    if [ "$2" -lt 65536 ]; then ok "$f: under 64 MiB of RSS ($2 KiB)"; else not_ok "$f: $2 KiB of RSS"; fi
done
run "$VRAM" fit "$T/big-config.json"
expect_match "the big config.json: says it is too big, and the limit" "$OUT" \
    "big-config.json: 200(.0)? MiB is too big for a config.json .*vram reads up to 4.00 MiB"
run "$VRAM" fit "$T/strings.gguf"
expect_match "the GGUF of empty strings: its header runs past the limit" "$OUT" "runs past"
run "$VRAM" fit "$T/big-header.safetensors"
expect_match "the 100 MiB header read through: it has no tensors" "$OUT" "no tensors in its header"

finish
