#!/bin/sh
# Model names as clients send them, everywhere vram serve takes a name:
# a Hugging Face id (Qwen/Qwen2.5-7B-Instruct), Ollama's namespace/model:tag
# (library/qwen2.5:7b, hf.co/...:Q4_K_M) and a name that begins with a
# digit (01-ai/Yi-6B). Asserts: the configuration takes them and refuses
# names that could hurt (.., a leading /, control characters, overlong)
# with their line; the proxy finds them in a body, in /m/NAME/... and
# /v1/models/NAME, '/' escaped or not; the CLI (load, ps, suspend, resume,
# unload) and the control API's URLs reach them; the log is one file
# (Qwen%2F...log), no folder; /metrics labels carry them whole; the store
# keeps them (a daemon killed and started again adopts the model).
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-names"
TESTMODEL="$T/testmodel-names"
daemon_env 23 900
HF=Qwen/Qwen2.5-7B-Instruct
# names longer than inih keeps of a section (49 characters), alike in
# their first 60: each its own model
LONGHF=hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M-with-a-longer-tag
LONGHF2=hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M-with-another-tag
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 15G
port_base = $PORTS
listen = 127.0.0.1:$LISTEN

[model $HF]
command = $TESTMODEL --bytes 1G --chunks 2 --chunk-ms 10
vram = 2G
gpu = 0
swap = driver
aliases = library/qwen2.5:7b, hf.co/Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M

[model llama3.1:8b]
command = $TESTMODEL --bytes 1G --chunks 2 --chunk-ms 10
vram = 2G
gpu = 1
swap = driver

[model 01-ai/Yi-6B]
command = $TESTMODEL --bytes 1G
vram = 2G
gpu = 1
swap = driver

[model $LONGHF]
command = $TESTMODEL --bytes 1G
vram = 2G
gpu = 1
swap = driver

[model $LONGHF2]
command = $TESTMODEL --bytes 1G
vram = 2G
gpu = 1
swap = driver
CONF

OUT=$("$VRAM" serve --check --config "$T/vram.conf" 2>&1)
expect_match "--check takes a Hugging Face id, an Ollama name and its aliases" "$OUT" "5 models"

# names that could hurt: refused with the file's line and why
bad() {
    printf '[serve]\nsocket = %s/x.sock\n\n[model ok]\ncommand = x\nvram = 1G\n%s\n' "$T" "$1" >"$T/bad.conf"
    "$VRAM" serve --check --config "$T/bad.conf" 2>&1
    echo "exit $?"
}
expect_match "a name with '..' is refused, with its line" \
    "$(bad "$(printf '\n[model ../../etc/x]\ncommand = x\nvram = 1G')" | tr '\n' ' ')" "bad.conf:9: model name '../../etc/x': '..' in it.*exit 2"
expect_match "a name that starts with '/' is refused" \
    "$(bad "$(printf '\n[model /etc/passwd]\ncommand = x\nvram = 1G')")" "model name '/etc/passwd': it starts with '/'"
expect_match "a control character in a name is refused" \
    "$(bad "$(printf '\n[model a\033b]\ncommand = x\nvram = 1G')")" "a control character in it"
LONG=$(printf 'a%.0s' $(seq 1 130))
expect_match "an overlong name is refused" \
    "$(bad "$(printf '\n[model %s]\ncommand = x\nvram = 1G' "$LONG")")" "longer than 127 characters"
expect_match "an alias with '//' is refused, with its line" "$(bad 'aliases = org//m')" \
    "bad.conf:7: alias 'org//m': '//' in it"

"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.5; pkill -9 -f "$TESTMODEL" 2>/dev/null; cleanup' EXIT
up() { curl -s -m 1 -o /dev/null "$P/v1/models"; }
wait_for 5 up || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }

expect_eq "GET /v1/models lists the names as configured" \
    "$(curl -s "$P/v1/models" | jq -c '[.data[].id]')" "[\"$HF\",\"llama3.1:8b\",\"01-ai/Yi-6B\",\"$LONGHF\",\"$LONGHF2\"]"

OUT=$("$VRAM" load "$HF" 2>&1)
expect_match "vram load NAME-WITH-SLASH: ready" "$OUT" "^$HF: ready on GPU 0"
expect_match "vram ps shows the whole name" "$("$VRAM" ps)" "^$HF +ready"
[ -f "$T/logs/Qwen%2FQwen2.5-7B-Instruct.log" ] && [ ! -e "$T/logs/Qwen" ] &&
    ok "its log is one file, Qwen%2FQwen2.5-7B-Instruct.log: no folder made of the name" ||
    not_ok "its log is one file" "$(ls -R "$T/logs")"

api() { curl -s -m 20 -o "$T/api.out" -w '%{http_code}' --unix-socket "$T/vram.sock" "$@"; }
expect_eq "control API: GET /v1/models/Qwen%2F... (as the CLI and the dashboard send it)" \
    "$(api "http://x/v1/models/Qwen%2FQwen2.5-7B-Instruct") $(jq -r .name "$T/api.out")" "200 $HF"
expect_eq "control API: GET /v1/models/Qwen/... with the '/' as it is" \
    "$(api "http://x/v1/models/$HF") $(jq -r .state "$T/api.out")" "200 ready"
expect_eq "control API: the log, NAME's '/' as it is" "$(api "http://x/v1/models/$HF/log?lines=5")" 200
expect_eq "control API: an alias names the model too" \
    "$(api "http://x/v1/models/library%2Fqwen2.5%3A7b") $(jq -r .name "$T/api.out")" "200 $HF"
expect_eq "control API: POST .../suspend, NAME's '/' as it is" \
    "$(api -X POST "http://x/v1/models/$HF/suspend") $(jq -r .state "$T/api.out")" "200 suspended"
expect_match "vram resume NAME-WITH-SLASH" "$("$VRAM" resume "$HF" 2>&1)" "^$HF: ready"
expect_match "vram suspend NAME-WITH-SLASH" "$("$VRAM" suspend "$HF" 2>&1)" "^$HF: suspended"
expect_match "vram load NAME-THAT-BEGINS-WITH-DIGITS (not a pid)" "$("$VRAM" load 01-ai/Yi-6B 2>&1)" \
    "^01-ai/Yi-6B: ready"
expect_match "vram suspend NAME-THAT-BEGINS-WITH-DIGITS (not a pid)" \
    "$("$VRAM" suspend 01-ai/Yi-6B 2>&1)" "^01-ai/Yi-6B: suspended"
OUT=$("$VRAM" load ../x 2>&1)
expect_eq "vram load ../x: refused before asking, exit 2" "$? $OUT" \
    "2 vram load: model name '../x': '..' in it: a name never climbs out of a folder"

# the proxy: a request names the model in its body, by name or alias
chat() { curl -sN -m 20 "$P/v1/chat/completions" -d "{\"model\":\"$1\",\"stream\":true,\"messages\":[]}"; }
expect_match "proxy: a chat for $HF (resumed for it)" "$(chat "$HF")" 'data: \[DONE\]'
expect_match "proxy: a chat for its Ollama alias library/qwen2.5:7b" "$(chat library/qwen2.5:7b)" 'data: \[DONE\]'
expect_match "proxy: a chat for hf.co/...:Q4_K_M" "$(chat hf.co/Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M)" 'data: \[DONE\]'
expect_match "proxy: a chat for llama3.1:8b" "$(chat llama3.1:8b)" 'data: \[DONE\]'
code() { curl -s -m 20 -o "$T/body" -w '%{http_code}' "$@"; }
expect_eq "proxy: /m/Qwen/Qwen2.5-7B-Instruct/echo, the '/' as it is" "$(code "$P/m/$HF/echo") $(cat "$T/body")" "200 ok"
expect_eq "proxy: /m/Qwen%2FQwen2.5-7B-Instruct/echo" "$(code "$P/m/Qwen%2FQwen2.5-7B-Instruct/echo") $(cat "$T/body")" "200 ok"
expect_eq "proxy: /m/llama3.1%3A8b/echo" "$(code "$P/m/llama3.1%3A8b/echo") $(cat "$T/body")" "200 ok"
expect_eq "proxy: /m/ of a name nobody serves: 404" "$(code "$P/m/Qwen/Other/echo")" 404
expect_eq "proxy: GET /v1/models/Qwen%2F... (as the openai client encodes it)" \
    "$(curl -s "$P/v1/models/Qwen%2FQwen2.5-7B-Instruct" | jq -r .id)" "$HF"
expect_eq "proxy: GET /v1/models/Qwen/... with the '/' as it is" "$(curl -s "$P/v1/models/$HF" | jq -r .id)" "$HF"

M=$(curl -s -m 5 --unix-socket "$T/vram.sock" http://x/metrics)
expect_match "/metrics: the name whole in its label" "$M" "^vram_model_state\{model=\"$HF\",state=\"(ready|busy)\"\} 1"
expect_match "/metrics: an Ollama name whole in its label" "$M" "^vram_requests_total\{model=\"llama3.1:8b\",code=\"200\"\}"
if command -v promtool >/dev/null; then
    printf '%s\n' "$M" >"$T/metrics"
    OUT=$(promtool check metrics <"$T/metrics" 2>&1)
    expect_eq "/metrics with these names passes promtool check metrics" "$?" 0
fi

# the store: a daemon killed and started again adopts the model by its name
PID=$("$VRAM" ps --json | jq -r ".models[] | select(.name == \"$HF\") | .pid")
kill -9 $DAEMON
wait $DAEMON 2>/dev/null
"$VRAM" serve --config "$T/vram.conf" >>"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
adopted() { [ "$("$VRAM" ps --json 2>/dev/null | jq -r ".models[] | select(.name == \"$HF\") | .pid")" = "$PID" ]; }
wait_for 10 adopted && ok "a daemon started again adopts $HF (the store keeps its name)" ||
    not_ok "a daemon started again adopts $HF" "$("$VRAM" ps 2>&1)"
expect_match "vram unload NAME-WITH-SLASH" "$("$VRAM" unload "$HF" 2>&1)" "^$HF: stopp(ing|ed)"

[ "$FAIL" -eq 0 ] || { echo "# the daemon's log:"; sed 's/^/#   /' "$T/serve.log" | tail -40; }
finish
