#!/bin/bash
# The proxy of vram serve as real clients use it (issue 16), against the
# simulated driver, with curl and Python's urllib as the clients and
# backends that behave as real ones do (tests/helpers/httpmodel.py, on
# Python's HTTP/1.1 server, answers Expect: 100-continue with its own 100;
# testmodel streams server-sent events). Asserts: an 8 MiB upload with
# Expect gets its own answer and the next request on the same pooled
# backend connection gets its own; hop-by-hop headers and Expect never
# reach the backend; streams to HTTP/1.0 and Connection: close clients
# arrive whole; the metrics address serves /metrics only, by its own names only; the client's
# Authorization stops at the proxy and a model's api_key goes instead;
# errors in Ollama's dialect on /api/ and OpenAI's on /v1/; GET
# /v1/models/NAME; /metrics passes promtool check metrics.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-http"
TM="$T/testmodel-http"
# a copy of its own: what the exit kills is this test's models, no one else's
cp "$SRC/tests/helpers/httpmodel.py" "$T/httpmodel.py"
HM="$T/httpmodel.py"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 13) % 20000))
LISTEN=$((PORTS + 900))
METRICS=$((PORTS + 901))
P="http://127.0.0.1:$LISTEN"
M="http://127.0.0.1:$METRICS"
AUTH="Authorization: Bearer s3cret"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
metrics = 127.0.0.1:$METRICS
token = s3cret
; how long a request waits for its model: the broken model's failure must
; come within it (a 502, not a 503) on a loaded machine too; slow's start
; is longer (the 503)
wait = 20s

[model up]
command = python3 $HM
vram = 1G
gpu = 1
swap = driver

[model keyed]
command = python3 $HM --api-key backend-key
api_key = backend-key
vram = 1G
gpu = 1
swap = driver

[model sse]
command = $TM --bytes 64M --chunks 60 --chunk-ms 10
vram = 1G
gpu = 0
swap = driver

[model slow]
command = $TM --bytes 64M --startup 60
vram = 1G
gpu = 0
swap = driver

[model broken]
command = /nonexistent/model-server
vram = 1G
gpu = 0
CONF

"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.5; pkill -9 -f "$TM" 2>/dev/null; pkill -9 -f "$HM" 2>/dev/null; [ -n "${KEEP:-}" ] && cp -r "$T" /tmp/proxy_http-keep; cleanup' EXIT
wait_for 10 curl -sf -m 1 -H "$AUTH" "$P/v1/models" -o /dev/null ||
    { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
"$VRAM" load up >/dev/null && "$VRAM" load sse >/dev/null && "$VRAM" load keyed >/dev/null

# 1. an 8 MiB upload with Expect: 100-continue (curl sends it for bodies
#    over 1 MiB) to a backend that answers its own 100: the upload gets its
#    answer, and the next request on the same pooled connection gets its own
head -c 8M /dev/urandom >"$T/big"
SUM=$(sha256sum <"$T/big" | cut -d' ' -f1)
curl -s -m 30 -H "$AUTH" -H 'Expect: 100-continue' -H 'Content-Type: application/octet-stream' \
    --data-binary @"$T/big" -w '\n%{http_code}' "$P/m/up/upload" >"$T/upload"
expect_eq "8 MiB upload with Expect: its own answer, 200" "$(tail -1 "$T/upload")" 200
expect_eq "8 MiB upload with Expect: the backend read it whole" \
    "$(head -1 "$T/upload" | jq -r '"\(.bytes) \(.sha256)"' 2>/dev/null)" "8388608 $SUM"
curl -s -m 10 -H "$AUTH" "$P/m/up/small" >"$T/small"
expect_eq "the next request gets its own answer" "$(jq -r .small "$T/small" 2>/dev/null)" true
expect_eq "... on the same pooled backend connection" \
    "$(jq -r .peer "$T/small" 2>/dev/null)" "$(head -1 "$T/upload" | jq -r .peer 2>/dev/null)"
# hop-by-hop headers stop at the proxy; end-to-end ones pass
curl -s -m 10 -H "$AUTH" -H 'Expect: 100-continue' -H 'Connection: keep-alive, X-Hop' \
    -H 'X-Hop: 1' -H 'Keep-Alive: timeout=5' -H 'TE: trailers' -H 'Upgrade: h2c' \
    -H 'Proxy-Authorization: Basic eDp5' -H 'X-End: 1' "$P/m/up/headers" >"$T/headers"
expect_eq "hop-by-hop headers and Expect do not reach the backend" \
    "$(jq -r '.headers | keys | map(ascii_downcase) | map(select(. == "expect" or . == "x-hop" or . == "keep-alive" or . == "te" or . == "upgrade" or . == "proxy-authorization")) | length' "$T/headers" 2>/dev/null)" 0
expect_eq "an end-to-end header does" "$(jq -r '.headers["X-End"]' "$T/headers" 2>/dev/null)" 1

# 2. streams to clients that cannot take chunked answers, or close after
#    one: close-delimited (or chunked to HTTP/1.1), whole
count() { echo "$(grep -c '"chunk"' "$1") $(grep -c DONE "$1")"; }
curl -sN -m 30 --http1.0 -H "$AUTH" "$P/m/sse/stream" >"$T/s10"
expect_eq "an HTTP/1.0 client's stream arrives whole" "$(count "$T/s10")" "60 1"
curl -sN -m 30 --http1.0 -H "$AUTH" "$P/m/up/stream?n=50" >"$T/s10c"
expect_eq "... from a chunked backend too" "$(count "$T/s10c")" "50 1"
curl -sN -m 30 -H "$AUTH" -H 'Connection: close' "$P/m/sse/stream" >"$T/sclose"
expect_eq "a Connection: close client's stream arrives whole" "$(count "$T/sclose")" "60 1"
python3 - "$P" >"$T/surllib" 2>&1 <<'PY'
import json, sys, urllib.request
req = urllib.request.Request(sys.argv[1] + "/v1/chat/completions", method="POST",
    data=json.dumps({"model": "sse", "stream": True, "messages": []}).encode(),
    headers={"Authorization": "Bearer s3cret", "Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=30) as r:
    for line in r:
        sys.stdout.write(line.decode())
PY
expect_eq "Python urllib's stream arrives whole" "$(count "$T/surllib")" "60 1"
wait_for 5 grep -q "proxy sse /stream" "$T/serve.log"
expect_eq "the log says they succeeded (200, not 499)" \
    "$(grep -c 'proxy sse /stream 499' "$T/serve.log") $(grep -c 'proxy sse /stream 200' "$T/serve.log")" "0 2"

# 2b. a backend that ends its answer by closing, the close in the same
#    segment as the last bytes (one edge of the socket for both): the
#    answer ends there, whole; cut mid-chunk, a broken transfer, not a hang
for i in 1 2 3; do
    curl -s -m 10 -H "$AUTH" -w ' %{http_code}' "$P/m/up/close" >"$T/close"
    expect_eq "an answer ended by the backend's close arrives, ended ($i)" "$?: $(cat "$T/close")" '0: {"close": true}
 200'
done
curl -s -m 10 -H "$AUTH" "$P/m/up/cut" >"$T/cut"
expect_eq "an answer the backend cut short: a broken transfer (curl 18), not a hang (28)" "$?" 18

# 2c. clients that send a request with Expect: 100-continue and reset the
#     connection at once: the proxy's 100 cannot be written, and the
#     request must die with its connection (it was passed on, and its
#     answer written to the freed connection: the daemon crashed)
python3 - "$LISTEN" <<'PY'
import socket, struct, sys
body = b'{"model":"up"}'
for i in range(200):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.sendall(b"POST /m/up/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
              b"Authorization: Bearer s3cret\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    s.close()
PY
curl -s -m 10 -H "$AUTH" "$P/m/up/small" >"$T/small2"
expect_eq "after 200 clients reset with Expect, the proxy still answers" \
    "$(jq -r .small "$T/small2" 2>/dev/null)" true
expect_eq "... and its log has no sanitizer's report" "$(grep -c 'Sanitizer' "$T/serve.log")" 0

# 2d. a client that reads nothing of a large answer: the proxy stops
#     reading the backend (it does not hold the answer in its memory), and
#     the answer arrives whole once the client reads
python3 - "$LISTEN" "$DAEMON" >"$T/slowread" 2>&1 <<'PY'
import json, socket, sys, time, urllib.request
port, pid = int(sys.argv[1]), sys.argv[2]
def progress():
    req = urllib.request.Request("http://127.0.0.1:%d/m/up/progress" % port,
                                 headers={"Authorization": "Bearer s3cret"})
    return json.load(urllib.request.urlopen(req, timeout=10))["mib"]
def rss_mib():
    for line in open("/proc/%s/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET /m/up/big?mb=256 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\n\r\n")
# until the backend writes no more (it is held back) or has written it all
last, since = -1, time.time()
while time.time() - since < 1.0 and last < 256:
    time.sleep(0.05)
    now = progress()
    if now != last:
        last, since = now, time.time()
held = rss_mib()
s.settimeout(30)
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(65536)
got = len(head.split(b"\r\n\r\n", 1)[1])
while got < 256 << 20:
    d = s.recv(1 << 20)
    if not d:
        break
    got += len(d)
print("backend wrote %d MiB, the daemon held %d MiB, the client got %d bytes" % (last, held, got))
PY
expect_match "a client that reads nothing: the backend is held back, the daemon stays small" \
    "$(cat "$T/slowread")" "backend wrote ([0-9]|[1-9][0-9]) MiB, the daemon held ([0-9]|[1-9][0-9]|1[0-9][0-9]) MiB"
expect_match "... and the answer arrives whole once it reads" "$(cat "$T/slowread")" "got 268435456 bytes"

# 3. the metrics address: /metrics only, even where the token would open
#    the control API
code() { curl -s -m 60 -o "$T/body" -w '%{http_code}' "$@"; }
expect_eq "metrics address: GET /metrics" "$(code "$M/metrics")" 200
expect_eq "metrics address: unload refused" "$(code -X POST "$M/v1/models/up/unload")" 404
expect_eq "metrics address: unload with the token refused" \
    "$(code -X POST -H "$AUTH" "$M/v1/models/up/unload")" 404
expect_eq "metrics address: /vram/ refused" "$(code -X POST -H "$AUTH" "$M/vram/v1/models/up/unload")" 404
expect_eq "metrics address: the model list refused" "$(code "$M/v1/models")" 404
# a page that points a name of its own at the address (DNS rebinding), or
# one elsewhere that asks: once, both read model names and states
expect_eq "metrics address: a name that is not its own (DNS rebinding): 403" \
    "$(code -H 'Host: evil.example:'$METRICS "$M/metrics")" 403
expect_eq "... and no model's name in the answer" "$(grep -c 'model="up"' "$T/body")" 0
expect_eq "metrics address: a page elsewhere (Origin): 403" \
    "$(code -H 'Origin: http://evil.example' "$M/metrics")" 403
expect_eq "metrics address: by localhost, as a scraper asks: 200" \
    "$(code -H "Host: localhost:$METRICS" "$M/metrics")" 200
expect_eq "... and the model is still loaded" \
    "$("$VRAM" ps --json | jq -r '.models[] | select(.name == "up") | .state')" ready

# 4. the client's Authorization (the proxy's token) stops at the proxy; a
#    model's api_key goes to its backend instead
expect_eq "a backend that wants its key gets api_key, not the client's token" \
    "$(code -H "$AUTH" "$P/m/keyed/headers") $(jq -r '.headers.Authorization' "$T/body" 2>/dev/null)" \
    "200 Bearer backend-key"
expect_eq "a model without api_key: no Authorization reaches it" \
    "$(code -H "$AUTH" "$P/m/up/headers") $(jq -r '.headers.Authorization' "$T/body" 2>/dev/null)" "200 null"

# 5. errors in the route's dialect: Ollama's {"error": "text"} on /api/,
#    OpenAI's {"error": {"message", "type", "code"}} on /v1/
err() { jq -r "$1" "$T/body" 2>/dev/null; }
expect_eq "/api/generate, unknown model: 404, the error a string" \
    "$(code -H "$AUTH" "$P/api/generate" -d '{"model":"nope","prompt":"x"}') $(err '.error | type')" "404 string"
expect_match "... saying what" "$(err .error)" "no model 'nope'"
expect_eq "/api/chat, malformed JSON: 400, a string" \
    "$(code -H "$AUTH" "$P/api/chat" -d '{"model": ') $(err '.error | type')" "400 string"
expect_eq "/api/tags without the token: 401, a string" "$(code "$P/api/tags") $(err '.error | type')" "401 string"
expect_eq "/api/generate, a model that cannot start: 502, a string" \
    "$(code -H "$AUTH" "$P/api/generate" -d '{"model":"broken"}') $(err '.error | type')" "502 string"
expect_match "... saying why, in vram's words" "$(err .error)" "command not found"
# a model's log is for the socket's people: the client may be anyone with a key
expect_eq "... and no line of its log (issue 42, item 3)" "$(err .error | grep -c "model-server: not found")" 0
expect_match "... but where to read it" "$(err .error)" "its log says more"
expect_eq "/v1/chat/completions, unknown model: 404 not_found_error, model_not_found" \
    "$(code -H "$AUTH" "$P/v1/chat/completions" -d '{"model":"nope"}') $(err '"\(.error.type) \(.error.code) \(.error.message | type)"')" \
    "404 not_found_error model_not_found string"
expect_eq "/v1/chat/completions, no model field: 400 invalid_request_error" \
    "$(code -H "$AUTH" "$P/v1/chat/completions" -d '{}') $(err .error.type)" "400 invalid_request_error"
expect_eq "/v1/models without the token: 401 authentication_error" \
    "$(code "$P/v1/models") $(err .error.type)" "401 authentication_error"
expect_eq "/v1/completions, a model that cannot start: 502 server_error" \
    "$(code -H "$AUTH" "$P/v1/completions" -d '{"model":"broken"}') $(err .error.type)" "502 server_error"
expect_eq "/v1/completions, a model slower than wait: 503 service_unavailable" \
    "$(code -H "$AUTH" "$P/v1/completions" -d '{"model":"slow"}') $(err .error.type)" "503 service_unavailable"
head -c 17M /dev/zero >"$T/huge"
expect_eq "/api/chat, a body over max_body: 413, a string" \
    "$(code -H "$AUTH" "$P/api/chat" --data-binary @"$T/huge") $(err '.error | type')" "413 string"
expect_eq "/v1/chat/completions, a body over max_body: 413 request_too_large" \
    "$(code -H "$AUTH" "$P/v1/chat/completions" --data-binary @"$T/huge") $(err .error.code)" "413 request_too_large"

# 6. one model's object
expect_eq "GET /v1/models/up: the model object" \
    "$(code -H "$AUTH" "$P/v1/models/up") $(err '"\(.id) \(.object)"')" "200 up model"
expect_eq "GET /v1/models/up%3Alatest (the name as the openai client encodes it): the model" \
    "$(code -H "$AUTH" "$P/v1/models/up%3Alatest") $(err .id)" "200 up"
expect_eq "GET /v1/models/nope: 404 model_not_found" \
    "$(code -H "$AUTH" "$P/v1/models/nope") $(err .error.code)" "404 model_not_found"

# 7. request smuggling (issue 42, item 6): a header whose name is no
#    token ("Content-Length : N", a blank before the colon) is one length
#    to the proxy and none to Python's server (the line ends its headers
#    there): the body, a request of its own, was read by the backend as
#    the next request on the pooled connection, and the next client got
#    its answer. Every listener answers 400 and closes; the backend never
#    sees the smuggled request. So for two Host headers, and a header
#    whose name begins with Transfer-Encoding; and a request
#    refused by its Host gets no 100 Continue first.
python3 - "$LISTEN" "$METRICS" "$T/vram.sock" >"$T/smuggle" 2>&1 <<'PY'
import socket, sys
def talk(raw, where):
    if where.startswith("/"):
        s = socket.socket(socket.AF_UNIX)
        s.connect(where)
    else:
        s = socket.create_connection(("127.0.0.1", int(where)))
    s.settimeout(5)
    s.sendall(raw)
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except socket.timeout:
        got += b" [still open]"
    s.close()
    return got.decode("latin-1")
smug = b"GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
for name, where, path in (("proxy /m/", sys.argv[1], b"/m/up/upload"),
                          ("proxy /v1/", sys.argv[1], b"/v1/chat/completions"),
                          ("proxy /api/", sys.argv[1], b"/api/chat"),
                          ("metrics", sys.argv[2], b"/metrics"),
                          ("socket", sys.argv[3], b"/v1/models")):
    for te in (b"Content-Length : %d" % len(smug), b"Transfer-Encoding\t: chunked"):
        body = smug if te.startswith(b"Content") else b"%x\r\n%s\r\n0\r\n\r\n" % (len(smug), smug)
        got = talk(b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\n"
                   b"Content-Type: application/json\r\n" + te + b"\r\n\r\n" + body, where)
        print("%s %s: %s" % (name, te.split(b":")[0].decode().strip(),
                             got.split("\r\n")[0] + (" [still open]" if got.endswith("[still open]") else "")))
    # a name that begins with Transfer-Encoding (found by fuzz_relay): a
    # backend on http-parser 2.9 takes it for the real one
    got = talk(b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer s3cret\r\n"
               b"Content-Type: application/json\r\nTransfer-Encodingt: h\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", where)
    print("%s TE-like name: %s%s" % (name, got.split("\r\n")[0],
                                     " (says why)" if "begins with Transfer-Encoding" in got else ""))
    got = talk(b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n"
               b"Authorization: Bearer s3cret\r\n\r\n", where)
    print("%s two Host: %s" % (name, got.split("\r\n")[0]))
got = talk(b"POST /m/up/upload HTTP/1.1\r\nHost: evil.example\r\nExpect: 100-continue\r\n"
           b"Authorization: Bearer s3cret\r\nContent-Length: 5\r\n\r\n", sys.argv[1])
print("Expect with a foreign Host: " + " | ".join(l for l in got.split("\r\n") if l.startswith("HTTP/")))
PY
for where in "proxy /m/" "proxy /v1/" "proxy /api/" metrics socket; do
    expect_eq "$where: 'Content-Length : N' (a blank before the colon): 400, closed" \
        "$(grep "^$where Content-Length: " "$T/smuggle")" "$where Content-Length: HTTP/1.1 400 Bad Request"
    expect_eq "$where: 'Transfer-Encoding\\t: chunked': 400, closed" \
        "$(grep "^$where Transfer-Encoding: " "$T/smuggle")" "$where Transfer-Encoding: HTTP/1.1 400 Bad Request"
    expect_eq "$where: two Host headers: 400" "$(grep "^$where two Host: " "$T/smuggle")" "$where two Host: HTTP/1.1 400 Bad Request"
    expect_eq "$where: a name that begins with Transfer-Encoding: 400" \
        "$(grep "^$where TE-like name: " "$T/smuggle")" "$where TE-like name: HTTP/1.1 400 Bad Request (says why)"
done
expect_eq "a request refused by its Host gets its 403 and no 100 Continue before it" \
    "$(grep '^Expect' "$T/smuggle")" "Expect with a foreign Host: HTTP/1.1 403 Forbidden"
curl -s -m 10 -H "$AUTH" "$P/m/up/small?after-smuggling" >/dev/null
wait_for 5 grep -q 'after-smuggling' "$T/logs/up.log"
expect_eq "the backend never read the smuggled request" "$(grep -c '/smuggled' "$T/logs/up.log")" 0

# 9. Prometheus: a valid exposition, with the requests, their times and
#    the switches
"$VRAM" suspend sse >/dev/null && "$VRAM" resume sse >/dev/null
curl -s -m 10 "$M/metrics" >"$T/metrics"
if command -v promtool >/dev/null; then
    OUT=$(promtool check metrics <"$T/metrics" 2>&1)
    expect_eq "promtool check metrics passes" "$?${OUT:+: $OUT}" 0
else
    not_ok "promtool check metrics passes" "promtool is missing: scripts/deps --test installs it (Debian's prometheus)"
fi
metric() { awk -v k="$1" '$1 == k { print $2 }' "$T/metrics"; }
expect_eq "requests by model and status" "$(metric 'vram_requests_total{model="up",code="200"}')" \
    "$(grep -c 'proxy up /.* 200 ' "$T/serve.log")"
expect_match "requests refused by the backend counted by their status" \
    "$(metric 'vram_requests_total{model="broken",code="502"}')" '^[1-9]'
expect_eq "a duration histogram: every request in +Inf" \
    "$(metric 'vram_request_duration_seconds_bucket{model="up",le="+Inf"}')" \
    "$(metric 'vram_request_duration_seconds_count{model="up"}')"
expect_match "a time-to-first-byte histogram" \
    "$(metric 'vram_request_first_byte_seconds_count{model="sse"}')" '^[1-9]'
expect_eq "the switches' durations" \
    "$(metric 'vram_model_transition_seconds_count{model="sse",kind="suspend"}') $(metric 'vram_model_transition_seconds_count{model="sse",kind="resume"}')" "1 1"
expect_match "vram_build_info" "$(grep '^vram_build_info' "$T/metrics")" '^vram_build_info\{version="[0-9.]+"\} 1$'

kill -TERM "$DAEMON"
wait_for 15 sh -c "! kill -0 $DAEMON 2>/dev/null"
finish
