#!/bin/bash
# vram serve's model proxy against the simulated driver: test backends
# (tests/helpers/testmodel) that stream slowly, on a GPU that holds one of
# them at a time. Asserts: streaming arrives as it is produced, concurrent
# requests to three models all succeed, a client that leaves cancels the
# backend's answer, a backend that dies mid-stream gives an error (not a
# hang), the OpenAI model list, waits that time out (503) and models that
# fail (502 with their log), and bad requests (4xx) while others are served.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
# a copy of our own, so that counting and killing model processes by name
# never touches another test's (the CLI tests run in parallel)
cp "$TESTMODEL" "$T/testmodel-proxy"
TESTMODEL="$T/testmodel-proxy"
daemon_env 7 900
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 15G
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
max_body = 64K
; how long a request waits for its model: more than three models' turns
; take on a loaded machine, less than slow's start
wait = 30s
CONF
# sparse simulated memory: fast swap would copy 9 GiB each time (see serve.sh)
for m in p1 p2 p3; do
    printf '\n[model %s]\ncommand = %s --bytes 9G --chunks 8 --chunk-ms 100\nvram = 10G\ngpu = 0\nswap = driver\n' \
        "$m" "$TESTMODEL" >>"$T/vram.conf"
done
printf '\n[model slow]\ncommand = %s --bytes 1G --startup 90\nvram = 2G\ngpu = 1\n' "$TESTMODEL" >>"$T/vram.conf"
printf '\n[model broken]\ncommand = /nonexistent/model-server\nvram = 1G\ngpu = 1\n' >>"$T/vram.conf"

"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'cp "$T/serve.log" /tmp/proxy-serve.log 2>/dev/null; kill -TERM $DAEMON 2>/dev/null; sleep 0.5; pkill -9 -f "$TESTMODEL" 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do curl -s -m 1 "$P/v1/models" >/dev/null && break; sleep 0.05; done

chat() { curl -sN -m "${2:-20}" "$P/v1/chat/completions" -d "{\"model\":\"$1\",\"stream\":true,\"messages\":[]}"; }

expect_eq "GET /v1/models: the configured models, OpenAI's format" \
    "$(curl -s "$P/v1/models" | jq -c '[.object, [.data[].id]]')" '["list",["p1","p2","p3","slow","broken"]]'

# streaming: the first chunks arrive while the backend is still producing
"$VRAM" load p1 >/dev/null
chat p1 >"$T/stream" &
C=$!
wait_for 5 grep -q chunk "$T/stream"
PART=$(cat "$T/stream")
wait $C
expect_match "streaming: chunks arrive before the answer ends" "$PART" '^data: \{"chunk":0[,}]'
case "$PART" in *DONE*) not_ok "streaming: not buffered until the end" "$PART" ;;
*) ok "streaming: not buffered until the end" ;; esac
expect_match "streaming: the whole answer arrives" "$(cat "$T/stream")" 'data: \[DONE\]'

# three models, one GPU that holds one at a time: every request succeeds
W=""
for m in p1 p2 p3; do
    chat "$m" 120 >"$T/c.$m" &
    W="$W $!"
done
wait $W
for m in p1 p2 p3; do
    expect_match "concurrent: $m answered in full" "$(cat "$T/c.$m")" 'data: \[DONE\]'
done
expect_match "concurrent: models were swapped to make room" "$(cat "$T/serve.log")" "suspended"

# a client that leaves cancels the backend's answer
"$VRAM" load p2 >/dev/null
B=$(curl -s "$P/m/p2/cancelled")
curl -sN -m 0.35 "$P/m/p2/stream" >/dev/null
cut_short() { [ "$(curl -s "$P/m/p2/cancelled")" = $((B + 1)) ]; }
wait_for 5 cut_short
expect_eq "a client that leaves: the backend's stream is cut" "$(curl -s "$P/m/p2/cancelled")" $((B + 1))
wait_for 5 grep -q "proxy p2 /stream" "$T/serve.log" # the log is written every tick
expect_match "the proxy logs the request with its timings" "$(cat "$T/serve.log")" \
    "proxy p2 /stream [0-9]+ wait [0-9.]+ ms, first byte [0-9.]+ ms, total [0-9.]+ ms"

# a backend that dies mid-stream: the client gets an error, not a hang
S=$(date +%s)
curl -sN -m 20 "$P/m/p3/crash-stream" >"$T/crash"
RC=$?
expect_eq "backend crash mid-stream: curl sees a broken transfer" "$([ $RC -ne 0 ] && [ $RC -ne 28 ] && echo error)" error
expect_eq "backend crash mid-stream: no hang" "$([ $(($(date +%s) - S)) -lt 10 ] && echo quick)" quick
expect_match "backend crash mid-stream: what came before arrived" "$(cat "$T/crash")" '"chunk":1'

# heads longer than the proxy's 4 KiB write buffer, both ways, arrive whole
LONG=$(head -c 6000 /dev/zero | tr '\0' 'v')
H=$(curl -s -m 10 -D - -o "$T/echo" -H "X-Echo: $LONG" "$P/m/p1/echo")
expect_eq "a 6000-byte header reaches the model whole" "$(cat "$T/echo")" "$LONG"
expect_eq "a 6000-byte header in the answer reaches the client whole" \
    "$(printf '%s\n' "$H" | tr -d '\r' | sed -n 's/^X-Echo: //p')" "$LONG"

# waiting has a bound: 503 with Retry-After; a model that cannot start: 502 with why
H=$(curl -s -m 60 -D - -o "$T/slow" "$P/m/slow/echo")
expect_match "a model slower than wait: 503" "$H" "^HTTP/1.1 503"
expect_match "a model slower than wait: Retry-After" "$H" "Retry-After: [0-9]+"
expect_match "a model slower than wait: says why" "$(cat "$T/slow")" "timed out waiting"
CODE=$(curl -s -m 30 -o "$T/broken" -w '%{http_code}' "$P/v1/completions" -d '{"model":"broken"}')
expect_eq "a model that cannot start: 502" "$CODE" 502
expect_match "a model that cannot start: its error" "$(cat "$T/broken")" "command not found"

# bad input: a clear 4xx, and the proxy goes on serving
code() { curl -s -m 10 -o "$T/bad" -w '%{http_code}' "$@"; }
expect_eq "malformed JSON: 400" "$(code "$P/v1/chat/completions" -d '{"model": ')" 400
expect_eq "no model field: 400" "$(code "$P/v1/chat/completions" -d '{"messages":[]}')" 400
expect_match "no model field: says how" "$(cat "$T/bad")" 'add \\"model\\"'
expect_eq "unknown model: 404" "$(code "$P/v1/chat/completions" -d '{"model":"gpt-9"}')" 404
head -c 100000 /dev/zero | tr '\0' 'x' >"$T/big"
expect_eq "body over max_body: 413" "$(code "$P/v1/chat/completions" --data-binary @"$T/big")" 413
expect_eq "unknown route: 404" "$(code "$P/elsewhere")" 404
FLOOD=$(head -c 40000 /dev/zero | tr '\0' 'h')
expect_match "header flood: refused" "$(code "$P/m/p1/echo" -H "X-Flood: $FLOOD")" "^(4[0-9][0-9]|000)$"
exec 3<>"/dev/tcp/127.0.0.1/$LISTEN"
printf 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"mod' >&3
expect_eq "a slow-loris client does not hold up others" "$(code "$P/v1/models")" 200
exec 3>&-
expect_match "after all that, streaming still works" "$(chat p1)" 'data: \[DONE\]'
expect_match "Ollama's route: /api/generate by its model field, answered in Ollama's form" \
    "$(curl -sN -m 20 "$P/api/generate" -d '{"model":"p1","prompt":"hi"}')" '"done":true,"done_reason":"stop"'

# a token, set by a reload: without it 401, with it served
sed -i "s/^wait = 30s$/wait = 30s\ntoken = s3cret/" "$T/vram.conf"
RELOADS=$(grep -c 'configuration reloaded' "$T/serve.log")
kill -HUP "$DAEMON"
wait_for 10 sh -c "[ \$(grep -c 'configuration reloaded' '$T/serve.log') -gt $RELOADS ]"
expect_eq "token: a request without it gets 401" "$(code "$P/m/p1/echo")" 401
expect_eq "token: a request with it is served" \
    "$(code -H 'Authorization: Bearer s3cret' "$P/m/p1/echo")" 200

finish
