#!/bin/sh
# vram serve with only discover = (issue 33): the GGUF models of an Ollama
# store, a Hugging Face cache, an LM Studio folder and llama.cpp's cache,
# laid out here as those tools lay them out, become models of the daemon
# under their stores' names, run by llama-server (a stand-in here:
# tests/helpers/fake-llama-server records its arguments and holds what
# vram fit says llama-server would). With the official npm `ollama`
# client: the list, chats with two models on a card that holds one (the
# first suspended by fast swap, not stopped, and answering the same after),
# a context asked for with options.num_ctx; the recorded -c and -ngl are
# what vram fit says fits; vram ps says where each came from; discover_exclude,
# a [model] section of the same name, a store that changes (SIGHUP), and no
# llama-server at all.
. "$(dirname "$0")/lib.sh"
: "${MKMODEL:?}" "${TESTMODEL:?}"
C="$SRC/tests/clients"
if ! command -v node >/dev/null || [ ! -d "$C/node_modules/ollama" ] ||
    [ "$(node -p 'process.versions.node.split(".")[0] >= 20')" != true ]; then
    echo "discover: needs node 20 or later and the clients (cd $SRC/tests/clients && npm install"
    echo "--omit=optional --ignore-scripts; scripts/check does it)"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
daemon_env 17 700
export VRAM_SIM="$WS" # one GPU
# the stand-in holds a 16th of what llama-server would: the simulated driver
# copies slowly, and the card's budget below is what makes it hold one
export HOME="$T/home" FAKE_LLAMA_LOG="$T/llama.args" FAKE_LLAMA_SCALE=16 VRAM TESTMODEL
unset OLLAMA_MODELS HF_HOME HF_HUB_CACHE XDG_CACHE_HOME LLAMA_CACHE
run() { OUT=$("$@" 2>&1); RC=$?; }
small() { "$MKMODEL" gguf "$1" 0.05; } # 1.0 GiB under llama-server at 1024 tokens

# the stores, as fit_stores.sh lays them out
O="$HOME/.ollama/models"
D=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkdir -p "$O/blobs" "$O/manifests/registry.ollama.ai/library/tiny"
small "$O/blobs/sha256-$D"
printf '{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":1}]}' \
    "$D" >"$O/manifests/registry.ollama.ai/library/tiny/1b"
REV=0123456789abcdef0123456789abcdef01234567
B="$HOME/.cache/huggingface/hub/models--bartowski--Tiny-GGUF"
mkdir -p "$B/refs" "$B/blobs" "$B/snapshots/$REV"
printf '%s' "$REV" >"$B/refs/main"
small "$B/blobs/q4" && ln -s ../../blobs/q4 "$B/snapshots/$REV/Tiny-Q4_K_M.gguf"
small "$B/blobs/q8" && ln -s ../../blobs/q8 "$B/snapshots/$REV/Tiny-Q8_0.gguf"
L="$HOME/.lmstudio/models/lmstudio-community/Mini-GGUF"
mkdir -p "$L" && small "$L/Mini-Q4_K_M.gguf"
# larger than the card's budget: some layers on the GPU, the rest on the CPU
mkdir -p "$HOME/.lmstudio/models/lmstudio-community/Big-GGUF"
"$MKMODEL" gguf "$HOME/.lmstudio/models/lmstudio-community/Big-GGUF/Big-Q4_K_M.gguf" 1.5
LC="$HOME/.cache/llama.cpp"
mkdir -p "$LC" && small "$LC/unsloth_Small-GGUF_Small-UD-Q4_K_XL.gguf"
echo '{}' >"$LC/manifest=unsloth=Small-GGUF=UD-Q4_K_XL.json"

mkdir -p "$T/bin"
ln -s "$SRC/tests/helpers/fake-llama-server" "$T/bin/llama-server"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
budget = 0:1200M
discover = ollama huggingface lmstudio llamacpp
discover_exclude = *:Q8_0
discover_ctx = 1024
CONF

# no llama-server anywhere: a clear error, before anything starts
PATH="/usr/bin:/bin" run "$VRAM" serve --check --config "$T/vram.conf"
expect_eq "no llama-server on PATH: --check fails (exit 2)" "$RC" 2
expect_match "... and says what to install or set" "$OUT" \
    "no llama-server on PATH .*install llama.cpp .*llama_server = /path/to/llama-server in \\[serve\\]"
export PATH="$T/bin:$PATH"
run "$VRAM" serve --check --config "$T/vram.conf"
expect_eq "with llama-server on PATH: --check passes" "$RC" 0
expect_match "five models found, the excluded one aside" "$OUT" ": 5 models,"

"$VRAM" serve --config "$T/vram.conf" >>"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null; [ -n "${KEEP:-}" ] && cp "$T/serve.log" "$T/llama.args" /tmp/discover-keep/; cleanup' EXIT
wait_for 10 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
ollama() { PROXY="$P" node "$C/discover_test.mjs" "$@" 2>&1; }
state() { "$VRAM" ps --json | jq -r --arg n "$1" ".models[] | select(.name == \$n) | .$2"; }

# 1. listed as their stores name them, before any is loaded; then two of
# them in turn on a card that holds one (one node process: it starts slowly)
expect_eq "none loaded yet" "$("$VRAM" ps --json | jq -c '[.models[].state] | unique')" '["stopped"]'
expect_eq "/v1/models lists them" "$(curl -s "$P/v1/models" | jq -c '[.data[].id] | length')" 5
run "$VRAM" ps
expect_match "vram ps says where each came from" "$OUT" '^tiny:1b +stopped .* ollama$'
expect_match "... the Hugging Face cache" "$OUT" '^bartowski/Tiny-GGUF:Q4_K_M +stopped .* huggingface$'
expect_match "... llama.cpp's cache" "$OUT" '^unsloth/Small-GGUF:UD-Q4_K_XL +stopped .* llamacpp$'
OUT=$(ollama list chat:tiny:1b chat:bartowski/Tiny-GGUF:Q4_K_M)
expect_eq "the ollama client lists the discovered models, by their stores' names" \
    "$(echo "$OUT" | jq -sc '.[0].list | sort')" \
    '["bartowski/Tiny-GGUF:Q4_K_M","lmstudio-community/Big-GGUF/Big-Q4_K_M.gguf","lmstudio-community/Mini-GGUF/Mini-Q4_K_M.gguf","tiny:1b","unsloth/Small-GGUF:UD-Q4_K_XL"]'
expect_eq "/api/show of a model found in Ollama's store (a blob, no .gguf): GGUF by its bytes, Ollama's Q4_K_M" \
    "$(curl -s "$P/api/show" -d '{"model":"tiny:1b"}' | jq -c '[.details.format, .details.quantization_level]')" \
    '["gguf","Q4_K_M"]'
FIRST=$(echo "$OUT" | jq -sr '.[1].content')
expect_match "a chat with tiny:1b, through llama-server's OpenAI API" "$FIRST" '^tiny:1b: memory intact'
expect_match "then with bartowski/Tiny-GGUF:Q4_K_M" "$(echo "$OUT" | jq -sr '.[2].content')" \
    '^bartowski/Tiny-GGUF:Q4_K_M: memory intact'
A_PID=$(sed -n 's/^pid \([0-9]*\): .* --alias tiny:1b$/\1/p' "$T/llama.args")
expect_eq "the first is suspended, not stopped" "$(state tiny:1b state)" suspended
expect_eq "... by fast swap" "$(state tiny:1b suspended_by)" fast
expect_eq "... the process that started" "$(state tiny:1b pid)" "$A_PID"

# 2. back to the first (resumed, the same answer), then a context asked
# for: it restarts with it
OUT=$(ollama chat:tiny:1b chat:tiny:1b@2048)
expect_eq "tiny:1b again: the same answer after the swap" "$(echo "$OUT" | jq -sr '.[0].content')" "$FIRST"
expect_eq "two starts before the context was asked for" \
    "$(head -2 "$T/llama.args" | grep -c ' -c 1024 ')" 2
expect_match "options.num_ctx 2048: answered" "$(echo "$OUT" | jq -sr '.[1].content')" '^tiny:1b: memory intact'
expect_match "... by llama-server started again with -c 2048" "$(tail -1 "$T/llama.args")" \
    ' -c 2048 -ngl [0-9]+ --alias tiny:1b$'
expect_eq "... three starts in all" "$(grep -c '' "$T/llama.args")" 3

# 3. the recorded -c and -ngl: what vram fit says fits the card's 1200M
for n in 1 3; do
    sed -n "${n}p" "$T/llama.args" >"$T/a.args"
    CTX=$(sed -n 's/.* -c \([0-9]*\) .*/\1/p' "$T/a.args")
    NGL=$(sed -n 's/.* -ngl \([0-9]*\) .*/\1/p' "$T/a.args")
    FILE=$(sed -n "${n}s/^pid [0-9]*: //p" "$T/llama.args.files")
    expect_eq "start $n: every layer on the GPU" "$NGL" 33
    expect_eq "start $n: vram fit says -c $CTX -ngl $NGL fits" \
        "$("$VRAM" fit --json --vram 1200M --ctx "$CTX" --ngl "$NGL" "$FILE" | jq -r '.models[0].verdict')" fits
done
expect_eq "the file it read is the blob in Ollama's store" "$FILE" "$(realpath "$O/blobs/sha256-$D")"
expect_match "... handed over open, behind a link of the daemon's" "$(sed -n 's/.* -m \([^ ]*\) .*/\1/p' "$T/a.args")" \
    "^$T/vram.sock.models/tiny:1b/sha256-$D\$"

# 4. a model larger than the card's budget: the layers that fit, vram fit's
BIG=lmstudio-community/Big-GGUF/Big-Q4_K_M.gguf
OUT=$(ollama "chat:$BIG")
expect_match "a model larger than the budget answers" "$(echo "$OUT" | jq -r .content)" "^$BIG: memory intact"
tail -1 "$T/llama.args" >"$T/b.args"
NGL=$(sed -n 's/.* -ngl \([0-9]*\) .*/\1/p' "$T/b.args")
FILE=$(tail -1 "$T/llama.args.files" | sed 's/^pid [0-9]*: //')
expect_eq "... some of its layers on the GPU, not all" "$([ "$NGL" -ge 1 ] && [ "$NGL" -lt 33 ] && echo yes)" yes
expect_eq "... at its context" "$(sed -n 's/.* -c \([0-9]*\) .*/\1/p' "$T/b.args")" 1024
J=$("$VRAM" fit --json --vram 1200M --ctx 1024 "$FILE")
expect_eq "... the -ngl vram fit says fits 1200M" "$NGL" "$(echo "$J" | jq '.models[0].llamacpp.ngl_fits')"
expect_eq "... where all of it does not" "$(echo "$J" | jq -r '.models[0].verdict')" partial
expect_eq "vram ps shows the context and layers" "$(state tiny:1b ctx)/$(state tiny:1b ngl)" "2048/33"

# the header, for clients that cannot add options (OpenAI's SDKs)
OUT=$(curl -s -H 'X-Vram-Num-Ctx: 3k' -H 'Content-Type: application/json' \
    -d '{"model":"tiny:1b","messages":[{"role":"user","content":"hi"}]}' "$P/v1/chat/completions")
expect_match "X-Vram-Num-Ctx: 3k on OpenAI's route: answered" \
    "$(echo "$OUT" | jq -r '.choices[0].message.content')" '^tiny:1b: memory intact'
expect_match "... by llama-server started with -c 3072" "$(tail -1 "$T/llama.args")" \
    ' -c 3072 -ngl [0-9]+ --alias tiny:1b$'
expect_eq "X-Vram-Num-Ctx: lots: 400" "$(curl -s -o /dev/null -w '%{http_code}' -H 'X-Vram-Num-Ctx: lots' \
    -d '{"model":"tiny:1b","messages":[]}' "$P/v1/chat/completions")" 400

# 5. the stores change: picked up on SIGHUP; a [model] of the same name wins
small "$L/Mini-Q8_0.gguf"
rm "$B/snapshots/$REV/Tiny-Q4_K_M.gguf"
printf '\n[model lmstudio-community/Mini-GGUF/Mini-Q4_K_M.gguf]\ncommand = %s --bytes 64M\nvram = 100M\n' \
    "$TESTMODEL" >>"$T/vram.conf"
kill -HUP "$DAEMON"
wait_for 10 sh -c "grep -q 'configuration reloaded' '$T/serve.log'"
OUT=$(ollama list)
expect_match "a file added to LM Studio's folder appears" "$OUT" 'lmstudio-community/Mini-GGUF/Mini-Q8_0.gguf'
expect_eq "a file removed from the cache is gone" "$(echo "$OUT" | grep -c 'Tiny-GGUF:Q4_K_M')" 0
expect_eq "the [model] section of the same name is the one served" \
    "$("$VRAM" ps --json | jq -r '.models[] | select(.name == "lmstudio-community/Mini-GGUF/Mini-Q4_K_M.gguf") | .source // "config"')" \
    config
expect_eq "... listed once" "$(echo "$OUT" | jq '[.list[] | select(. == "lmstudio-community/Mini-GGUF/Mini-Q4_K_M.gguf")] | length')" 1

finish
