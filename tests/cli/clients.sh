#!/bin/sh
# The proxy as real clients use it: the official npm clients `openai` (v5)
# and `ollama` (tests/clients, installed by scripts/check) against vram
# serve on the simulated driver, with two stub backends that speak one API
# each (tests/clients/stub.mjs) and a real llama.cpp, node-llama-cpp's
# prebuilt CPU build, serving a tiny GGUF with random weights made here
# (bench/mkgguf.py --random). What is checked is in
# tests/clients/clients_test.mjs: chats streamed and not both ways across
# the APIs, tool calls, embeddings, errors as each client reads them,
# aliases and NAME:latest, /api/tags, /api/ps, /api/show, /v1/models with
# states; and here, with curl: HEAD /, env = reaching the model's process,
# the config's checks of aliases and env.
. "$(dirname "$0")/lib.sh"
C="$SRC/tests/clients"
if ! command -v node >/dev/null || [ ! -d "$C/node_modules/openai" ] || [ ! -d "$C/node_modules/node-llama-cpp" ] ||
    [ "$(node -p 'process.versions.node.split(".")[0] >= 20')" != true ]; then
    echo "clients: needs node 20 or later and the clients (cd $SRC/tests/clients && npm install"
    echo "--omit=optional --ignore-scripts; scripts/check does it)"
    [ "${CI:-}" = true ] && exit 1 # CI installs them: there a missing piece is a failure
    exit 77
fi
daemon_env 11 800
python3 "$SRC/bench/mkgguf.py" --random 7 "$T" tiny-f16 >/dev/null
# its file = as a store's blob names it: no .gguf (the format is in its bytes)
ln "$T/tiny-f16.gguf" "$T/sha256-tiny"
# local stores, for the details of models without file = (found by name as
# vram fit finds them): the Hugging Face cache holds org/Oai-7B-Instruct
# (an alias of oai), Ollama's store library/oll-up:7b (oll's upstream_name)
export HF_HOME="$T/hf" OLLAMA_MODELS="$T/ollama"
unset HF_HUB_CACHE OLLAMA_KEEP_ALIVE OLLAMA_MAX_LOADED_MODELS OLLAMA_MAX_QUEUE
R="$HF_HOME/hub/models--org--Oai-7B-Instruct"
REV=0123456789abcdef0123456789abcdef01234567
mkdir -p "$R/refs" "$R/snapshots/$REV"
printf '%s' "$REV" >"$R/refs/main"
"$MKMODEL" shards "$R/snapshots/$REV" 2
D=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
mkdir -p "$OLLAMA_MODELS/blobs" "$OLLAMA_MODELS/manifests/registry.ollama.ai/library/oll-up"
"$MKMODEL" gguf "$OLLAMA_MODELS/blobs/sha256-$D"
printf '{"schemaVersion":2,"config":{"digest":"sha256:%s","size":485},"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:%s","size":4065132544}]}' \
    "$D" "$D" >"$OLLAMA_MODELS/manifests/registry.ollama.ai/library/oll-up/7b"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 15G
port_base = $PORTS
listen = 127.0.0.1:$LISTEN

[model oai]
command = node $C/stub.mjs openai
vram = 1G
gpu = 0
swap = driver
aliases = gpt-4o, oai-alias:v1, org/Oai-7B-Instruct, library/oai:7b
env = STUB_GREETING="hello there" STUB_N=3

[model oll]
command = node $C/stub.mjs ollama
api = ollama
upstream_name = library/oll-up:7b
vram = 1G
gpu = 0
swap = driver

[model tiny]
command = node $C/llama_server.mjs $T/tiny-f16.gguf
file = $T/sha256-tiny
vram = 1G
gpu = 1
swap = driver
start_timeout = 60s
CONF
# the checks of the new settings: every message names the line and the fix
bad() {
    printf '[serve]\nsocket = %s/x.sock\n\n[model a]\ncommand = x\nvram = 1G\n%s\n\n[model b]\ncommand = x\nvram = 1G\naliases = b2\n' "$T" "$1" >"$T/bad.conf"
    "$VRAM" serve --check --config "$T/bad.conf" 2>&1
}
expect_match "an alias that is another model's name is refused, with its line" "$(bad 'aliases = b')" \
    "bad.conf:7: alias 'b' of \[model a\] is also \[model b\]'s name"
expect_match "... or another's alias (b2:latest is b2)" "$(bad 'aliases = b2:latest')" "also \[model b\]'s name or alias"
expect_match "env = that sets PORT is refused" "$(bad 'env = PORT=1')" "bad.conf:7: env: PORT, .* are vram's to set"
expect_match "env = with an unended quote is refused" "$(bad 'env = A="x')" "bad.conf:7: env: a quoted value does not end"
expect_match "api = something else is refused" "$(bad 'api = grpc')" "bad.conf:7: api 'grpc': openai .*, ollama .* or both"

setsid "$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.5; cleanup' EXIT
up() { curl -s -m 1 -o /dev/null "$P/api/version"; }
wait_for 5 up || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }

H=$(curl -s -I -m 5 "$P/")
expect_match "HEAD /: 200, as Ollama's clients probe it" "$H" "^HTTP/1.1 200"
expect_eq "HEAD /: no body" "$(curl -s -I -m 5 "$P/" -o /dev/null -w '%{size_download}')" 0
# HEAD wherever GET is, as Ollama answers /, /api/version and /api/tags
# (probes, curl -I): the GET's status and length, no body
for u in / /api/version /api/tags /v1/models; do
    LEN=$(curl -s -m 5 "$P$u" | wc -c)
    expect_eq "HEAD $u: 200, the GET's Content-Length, no body" \
        "$(curl -s -I -m 5 "$P$u" -D "$T/head" -o /dev/null -w '%{http_code} %{size_download}') $(tr -d '\r' <"$T/head" | sed -n 's/^Content-Length: //Ip')" \
        "200 0 $LEN"
done
"$VRAM" load oai >/dev/null
PID=$("$VRAM" ps --json | jq -r '.models[] | select(.name == "oai") | .pid')
ENV=$(tr '\0' '\n' <"/proc/$PID/environ" 2>/dev/null | grep '^STUB_' | sort | tr '\n' ' ')
expect_eq "env =: the model's process has its variables, quotes taken off" "$ENV" "STUB_GREETING=hello there STUB_N=3 "

# a translated request is JSON, whatever the client called it: curl -d (as
# in Ollama's own examples) says application/x-www-form-urlencoded, which
# vLLM's and SGLang's servers (FastAPI) do not read as JSON (422)
curl -s -m 10 -o /dev/null "$P/api/chat" -d '{"model":"oai","stream":false,"messages":[{"role":"user","content":"hi"}]}'
expect_eq "Ollama's curl example, translated: the backend gets Content-Type: application/json" \
    "$(curl -s -m 5 "$P/m/oai/last/headers" | jq -r '."content-type"')" application/json
curl -s -m 10 -o /dev/null "$P/v1/chat/completions" -d '{"model":"oll","messages":[{"role":"user","content":"hi"}]}'
expect_eq "... and the other way" "$(curl -s -m 5 "$P/m/oll/last/headers" | jq -r '."content-type"')" application/json

# every model has a digest, 64 hex digits as Ollama's: its CLI prints
# digest[:12] (OLLAMA_HOST=... ollama list / ollama ps), a panic on ""
DIG=$(curl -s -m 5 "$P/api/tags" | jq -r '[.models[] | .digest // "" | test("^[0-9a-f]{64}$")] | all')
expect_eq "/api/tags: every model has a digest of 64 hex digits" "$DIG" true
expect_eq "/api/ps: the same digest as /api/tags" \
    "$(curl -s -m 5 "$P/api/ps" | jq -r '.models[] | select(.name == "oai") | .digest // "none in ps"')" \
    "$(curl -s -m 5 "$P/api/tags" | jq -r '.models[] | select(.name == "oai") | .digest')"
expect_eq "... and one model's differs from another's" \
    "$(curl -s -m 5 "$P/api/tags" | jq -r '[.models[].digest] | unique | length')" 3

PROXY="$P" TINY_GGUF="$T/tiny-f16.gguf" node "$C/clients_test.mjs" >"$T/clients.out" 2>&1
cat "$T/clients.out"
B=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$T/clients.out")
[ -n "$B" ] || not_ok "the clients' test ran to its end"
if [ -n "$B" ]; then
    PASS=$((PASS + ${B% *}))
    FAIL=$((FAIL + ${B#* }))
fi
# keep_alive as Ollama reads it: Go's durations ("1h30m"), and null for the default
code() { curl -s -m 10 -o "$T/body" -w '%{http_code}' "$@"; }
expect_eq "keep_alive \"1h30m\" (a Go duration, as Ollama takes it): 200" \
    "$(code "$P/api/generate" -d '{"model":"oai","prompt":"hi","stream":false,"keep_alive":"1h30m"}')" 200
LEFT=$(curl -s -m 5 "$P/api/ps" | jq -r '.models[] | select(.name == "oai") | .expires_at | sub("\\.[0-9]+"; "") | fromdateiso8601 - now | floor')
expect_eq "... and the model stays 90 minutes" "$((LEFT > 5300 && LEFT <= 5400))" 1
expect_eq "keep_alive null (the default, as Ollama takes it): 200" \
    "$(code "$P/api/chat" -d '{"model":"oai","stream":false,"keep_alive":null,"messages":[{"role":"user","content":"hi"}]}')" 200

[ "$FAIL" -eq 0 ] || { echo "# the daemon's log:"; sed 's/^/#   /' "$T/serve.log" | tail -40; }
finish
