#!/bin/bash
# The proxy's address against a hostile web page, and its keys (issue 28,
# items 2, 3 and 12; issue 32: origins, CORS, tokens), on the simulated
# driver; the requests are what a browser sends (its Origin, Sec-Fetch-*
# headers and content types), made with curl. Asserts, each the promise
# docs/security.md makes:
#   - a page elsewhere cannot unload, load or prompt a model through a
#     token-less loopback proxy: its text/plain, form or multipart POST
#     (the kinds a page may send without asking) is refused 403 in the
#     route's dialect and the model stays; its image or script GET too;
#     curl -d and scripts that send no Origin work as before;
#   - a browser's own request to a model is JSON (415 otherwise);
#   - DNS rebinding: a Host that is not the listener's gets 403; loopback
#     names with any port, hosts = names, hosts = * pass; on a listener on
#     every address, its addresses by number and the machine's name pass;
#   - origins = (and OLLAMA_ORIGINS when the file says none): a preflight
#     as Chromium sends it is answered 204 with the Allow-* headers for a
#     listed origin, 403 for another; the answers carry
#     Access-Control-Allow-Origin for listed origins only, never a
#     backend's own;
#   - PROPFIND and TRACE get 501 with Allow and never reach a backend; a
#     method a route does not take gets 405 with Allow;
#   - Authorization: bearer (any case) is taken; every 401 says
#     WWW-Authenticate: Bearer; tokens = NAME:KEY and key files, whose
#     names (never keys) are in the log; a key file others may read is
#     refused. Browser-level checks (Chromium's own preflight) are in
#     tests/ui/ui_test.mjs.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
cp "$TESTMODEL" "$T/testmodel-browser"
TM="$T/testmodel-browser"
# a copy of its own: what the exit kills is this test's models, no one else's
cp "$SRC/tests/helpers/httpmodel.py" "$T/httpmodel.py"
HM="$T/httpmodel.py"
daemon_env 23 700
ANY=$((LISTEN + 1))
conf() { # extra [serve] lines on stdin
    {
        printf '[serve]\nsocket = %s/vram.sock\nstate = %s/vram.db\nlogs = %s/logs\n' "$T" "$T" "$T"
        printf 'port_base = %s\nlisten = 127.0.0.1:%s\nwait = 20s\n' "$PORTS" "$LISTEN"
        cat
        printf '\n[model m]\ncommand = %s --bytes 64M --chunks 2 --chunk-ms 10\nvram = 1G\n' "$TM"
        printf 'gpu = 0\nswap = driver\n\n[model h]\ncommand = python3 %s\nvram = 1G\n' "$HM"
        printf 'gpu = 1\nswap = driver\n'
    } >"$T/vram.conf"
}
conf </dev/null
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON $D2 2>/dev/null; sleep 0.5; pkill -9 -f "$TM" 2>/dev/null; pkill -9 -f "$HM" 2>/dev/null; cleanup' EXIT
wait_for 10 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
reload() { # the configuration again (conf's lines on stdin), applied
    n=$(grep -c 'configuration reloaded' "$T/serve.log")
    conf
    kill -HUP $DAEMON
    wait_for 10 sh -c "[ \$(grep -c 'configuration reloaded' '$T/serve.log') -gt $n ]" ||
        not_ok "the configuration reloads" "$(tail -3 "$T/serve.log")"
}
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .state"; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
say() { curl -s -w ' %{http_code}' "$@" | tr -d '\n'; } # the answer's body and status
EVIL=(-H 'Origin: http://evil.example' -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Mode: no-cors')
UNLOAD='{"model":"m","keep_alive":0}'

# ---- a page elsewhere, a loopback proxy without a token (issue 28, item 2) ----
"$VRAM" load m >/dev/null
for type in text/plain application/x-www-form-urlencoded 'multipart/form-data; boundary=x'; do
    OUT=$(say "$P/api/generate" "${EVIL[@]}" -H "Content-Type: $type" -d "$UNLOAD")
    expect_match "a page elsewhere POSTs $type to /api/generate: 403, Ollama's error" "$OUT" \
        '^\{"error":"a page of http://evil.example may not use this address.*"\} 403$'
done
expect_eq "... and the model it would have unloaded still runs" "$(state m)" ready
expect_eq "a page elsewhere that loads and pins a model (keep_alive -1): 403" \
    "$(code "$P/api/generate" "${EVIL[@]}" -H 'Content-Type: text/plain' -d '{"model":"h","keep_alive":-1}')" 403
expect_eq "... and the model was not started" "$(state h)" stopped
expect_match "on /v1/: 403 in OpenAI's form" \
    "$(curl -s "$P/v1/chat/completions" "${EVIL[@]}" -H 'Content-Type: text/plain' -d '{"model":"m"}')" \
    '"type":"permission_error"'
expect_eq "a form of a sandboxed page or a file (Origin: null): 403" \
    "$(code "$P/api/generate" -H 'Origin: null' -H 'Content-Type: application/x-www-form-urlencoded' -d "$UNLOAD")" 403
expect_eq "a page elsewhere reads the models (a CORS GET): 403" \
    "$(code "$P/api/ps" -H 'Origin: http://evil.example' -H 'Sec-Fetch-Mode: cors')" 403
expect_eq "an image or script of a page elsewhere (no Origin, Sec-Fetch-Site: cross-site): 403" \
    "$(code "$P/m/h/small" -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Mode: no-cors')" 403
expect_eq "... and the model it would have started was not" "$(state h)" stopped
expect_eq "a link followed from a page elsewhere to the dashboard: sent to its own address" \
    "$(code "$P/ui" -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Mode: navigate')" 307
SAME=(-H "Origin: http://127.0.0.1:$LISTEN" -H 'Sec-Fetch-Site: same-origin' -H 'Sec-Fetch-Mode: cors')
expect_eq "a page of this address, JSON: served" \
    "$(code "$P/v1/chat/completions" "${SAME[@]}" -H 'Content-Type: application/json' -d '{"model":"m","stream":true}')" 200
OUT=$(say "$P/api/generate" "${SAME[@]}" -H 'Content-Type: text/plain' -d "$UNLOAD")
expect_match "a browser's body that says text/plain, even from this address: 415, saying why" "$OUT" \
    'must be JSON, Content-Type: application/json \(this one says text/plain\).* 415$'
expect_eq "... and the model still runs" "$(state m)" ready
expect_eq "a script's multipart to /v1/: 415 (the model is read from JSON)" \
    "$(code "$P/v1/chat/completions" -F 'model=m')" 415
expect_eq "Node's fetch with a string body (text/plain, no Origin): served as before" \
    "$(code "$P/v1/chat/completions" -H 'Content-Type: text/plain;charset=UTF-8' -d '{"model":"m","stream":true}')" 200
# every route that takes a body, as the table of routes declares them
# (src/proxy/routes.c): plain text from a page, of this address or
# elsewhere, never gets through (a model's own routes, /m/NAME/, are its
# backend's to judge)
ROWS=$(sed -n 's#^ *{"\(/[^"]*\)", *ROUTES_\(POST\|ANY\), *[A-Z_]*, *\(BROWSER_[A-Z]*\),.*#\1=\3#p' \
    "$SRC/src/proxy/routes.c")
set -f # the rows' prefixes end in '*'
expect_match "(the routes are read from routes.c)" "$(printf '%s ' $ROWS)" '/vram/\*=BROWSER_KEY.*/api/chat=BROWSER_JSON'
for row in $ROWS; do
    path=${row%%=*} rule=${row#*=}
    case $path in *\*) path=${path%\*}x ;; esac # a prefix: a path under it
    [ "$rule" = BROWSER_BACKEND ] && continue
    case $rule in BROWSER_JSON) want=415 ;; BROWSER_KEY) want=403 ;; *) want="a rule for bodies" ;; esac
    expect_eq "a page of this address POSTs text/plain to $path ($rule): $want" \
        "$(code "$P$path" "${SAME[@]}" -H 'Content-Type: text/plain' -d "$UNLOAD")" "$want"
    expect_eq "a page elsewhere POSTs text/plain to $path: 403" \
        "$(code "$P$path" "${EVIL[@]}" -H 'Content-Type: text/plain' -d "$UNLOAD")" 403
done
set +f
expect_eq "... and the model still runs" "$(state m)" ready
OUT=$(curl -s "$P/api/generate" -d "$UNLOAD")
expect_match "curl -d (a form, no Origin), as Ollama's docs do it: served" "$OUT" '"done_reason":"unload"'
unloaded() { [ "$(state m)" != ready ]; }
expect_eq "... and it unloaded the model" "$(wait_for 10 unloaded && echo yes)" yes

# ---- DNS rebinding (item 3) ----
expect_match "Host: evil.example:PORT (a rebound name): 403, saying why" \
    "$(say -H "Host: evil.example:$LISTEN" "$P/api/ps")" 'DNS rebinding.* 403$'
for path in /v1/models /ui /vram/v1/models /m/h/small; do
    expect_eq "Host: evil.example, $path: 403" "$(code -H 'Host: evil.example' "$P$path")" 403
done
for host in "localhost:$LISTEN" localhost LOCALHOST "127.0.0.1:$LISTEN" "127.0.0.2:9" "[::1]:$LISTEN" "localhost:8080"; do
    expect_eq "Host: $host (a loopback name, any port: ssh -L): served" "$(code -H "Host: $host" "$P/api/version")" 200
done
expect_eq "Host: 10.1.2.3 on a loopback listener: 403" "$(code -H 'Host: 10.1.2.3' "$P/api/version")" 403
OUT=$(python3 - "$LISTEN" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /api/version HTTP/1.0\r\n\r\n")
print(s.recv(4096).split(b"\r\n")[0].decode())
PY
)
expect_eq "no Host at all (HTTP/1.0, not a browser): served" "$OUT" "HTTP/1.1 200 OK"

# ---- unknown methods, 405, the bearer scheme (item 12) ----
for method in PROPFIND TRACE; do
    H=$(curl -s -i -X $method "$P/m/h/small" | tr -d '\r' | tr '\n' '|')
    expect_match "$method: 501 with Allow" "$H" \
        '^HTTP/1.1 501 Not Implemented.*Allow: GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH'
done
expect_eq "... and it never reached the model (started for nothing)" "$(state h)" stopped
H=$(curl -s -i -X DELETE "$P/v1/models" | tr -d '\r' | tr '\n' '|')
expect_match "DELETE /v1/models: 405 with Allow: GET, HEAD" "$H" '^HTTP/1.1 405 .*Allow: GET, HEAD'

# ---- keys (issue 32) and the scheme's case ----
printf '# who may use the models\nbob:KB-%s\n\ncarol:KC-%s\n' $$ $$ >"$T/keys"
chmod 644 "$T/keys"
conf <<CONF
token = TOK-$$
tokens = alice:KA-$$, $T/keys
CONF
expect_match "a key file others may read: refused, saying the fix" \
    "$("$VRAM" serve --check --config "$T/vram.conf" 2>&1)" "key file $T/keys: mode 644.*chmod 600"
chmod 600 "$T/keys"
reload <<CONF
token = TOK-$$
tokens = alice:KA-$$, $T/keys
origins = http://app.example:3000, http://localhost:*
hosts = gpu.example
CONF
H=$(curl -s -i "$P/api/tags" | tr -d '\r' | tr '\n' '|')
expect_match "no key: 401 with WWW-Authenticate: Bearer" "$H" '^HTTP/1.1 401 .*WWW-Authenticate: Bearer realm="vram"'
expect_match "a wrong key: 401 with WWW-Authenticate too" \
    "$(curl -s -i -H 'Authorization: Bearer nope' "$P/v1/models" | tr -d '\r' | tr '\n' '|')" 'WWW-Authenticate: Bearer'
for a in "Bearer TOK-$$" "bearer TOK-$$" "BEARER  TOK-$$" "Bearer KA-$$" "Bearer KB-$$" "Bearer KC-$$"; do
    expect_eq "Authorization: ${a%%-*}...: served" "$(code -H "Authorization: $a" "$P/api/tags")" 200
done
curl -s -o /dev/null -H "Authorization: Bearer KB-$$" "$P/m/h/small"
curl -s -o /dev/null -H "Authorization: Bearer KA-$$" "$P/m/h/small"
wait_for 5 grep -q 'proxy h /small 200.*key alice' "$T/serve.log"
expect_match "the log names the key (bob)" "$(grep 'proxy h /small' "$T/serve.log")" ', key bob$'
expect_match "the log names the key (alice)" "$(grep 'proxy h /small' "$T/serve.log")" ', key alice$'
expect_eq "the log never holds a key" "$(grep -c "KA-$$\|KB-$$\|TOK-$$" "$T/serve.log")" 0
K=(-H "Authorization: Bearer KA-$$")

# ---- origins = and CORS (issue 32) ----
APP=http://app.example:3000
# what Chromium sends before a fetch with Authorization and a JSON body
PRE=(-X OPTIONS -H "Origin: $APP" -H 'Access-Control-Request-Method: POST'
    -H 'Access-Control-Request-Headers: authorization,content-type' -H 'Sec-Fetch-Mode: cors'
    -H 'Sec-Fetch-Site: cross-site' -H 'Sec-Fetch-Dest: empty')
H=$(curl -s -i "${PRE[@]}" "$P/v1/chat/completions" | tr -d '\r' | tr '\n' '|')
expect_match "a listed origin's preflight: 204" "$H" '^HTTP/1.1 204 No Content'
expect_match "... Access-Control-Allow-Origin: the origin" "$H" "Access-Control-Allow-Origin: $APP"
expect_match "... the methods" "$H" 'Access-Control-Allow-Methods: GET, HEAD, POST'
expect_match "... the headers it asked for" "$H" 'Access-Control-Allow-Headers: authorization,content-type'
expect_match "... Vary: Origin" "$H" 'Vary: Origin'
expect_eq "another origin's preflight: 403" \
    "$(code -X OPTIONS -H 'Origin: http://evil.example' -H 'Access-Control-Request-Method: POST' "$P/v1/chat/completions")" 403
expect_eq "a pattern: http://localhost:* takes http://localhost:5173" \
    "$(code -X OPTIONS -H 'Origin: http://localhost:5173' -H 'Access-Control-Request-Method: POST' "$P/api/chat")" 204
expect_eq "... not http://localhost.evil.example" \
    "$(code -X OPTIONS -H 'Origin: http://localhost.evil.example' -H 'Access-Control-Request-Method: POST' "$P/api/chat")" 403
H=$(curl -s -i "${K[@]}" -H "Origin: $APP" -H 'Sec-Fetch-Mode: cors' -H 'Content-Type: application/json' \
    -d '{"model":"m","stream":true}' "$P/v1/chat/completions" | tr -d '\r' | tr '\n' '|')
expect_match "the listed origin's request: served, with Access-Control-Allow-Origin" "$H" \
    "^HTTP/1.1 200 .*Access-Control-Allow-Origin: $APP"
H=$(curl -s -i "${K[@]}" -H "Origin: $APP" "$P/m/h/cors" | tr -d '\r' | tr '\n' '|')
expect_eq "a backend's own CORS (Access-Control-Allow-Origin: *) is not passed on" \
    "$(printf '%s\n' "$H" | tr '|' '\n' | grep -ci '^Access-Control-Allow-Origin')|$(printf '%s\n' "$H" | tr '|' '\n' | grep -ci 'Allow-Credentials')" "1|0"
H=$(curl -s -i "${K[@]}" "$P/m/h/cors" | tr -d '\r' | tr '\n' '|')
expect_eq "... nor to a client without an Origin" "$(printf '%s\n' "$H" | tr '|' '\n' | grep -ci '^Access-Control-')" 0
expect_eq "401 for the listed origin carries its CORS (its page can read why)" \
    "$(curl -s -i -H "Origin: $APP" "$P/api/tags" | tr -d '\r' | grep -c "^Access-Control-Allow-Origin: $APP")" 1
expect_eq "hosts = gpu.example: Host gpu.example:PORT served" "$(code "${K[@]}" -H "Host: gpu.example:$LISTEN" "$P/api/tags")" 200
expect_eq "... another name still 403" "$(code "${K[@]}" -H 'Host: other.example' "$P/api/tags")" 403
reload <<CONF
token = TOK-$$
hosts = *
CONF
expect_eq "hosts = * (behind a reverse proxy): any Host served" \
    "$(code -H "Authorization: Bearer TOK-$$" -H 'Host: anything.example' "$P/api/tags")" 200
expect_eq "the listed origins are gone with origins =: 403" \
    "$(code -X OPTIONS -H "Origin: $APP" -H 'Access-Control-Request-Method: POST' "$P/api/chat")" 403

# ---- OLLAMA_ORIGINS, and a listener on every address ----
printf '[serve]\nsocket = %s/any.sock\nstate = %s/any.db\nlisten = 0.0.0.0:%s\nport_base = %s\n\n[model x]\ncommand = true\nvram = 1G\n' \
    "$T" "$T" "$ANY" $((PORTS + 300)) >"$T/any.conf"
expect_match "OLLAMA_ORIGINS that is no list of origins: --check says so" \
    "$(OLLAMA_ORIGINS='http://a.example/path' "$VRAM" serve --check --config "$T/any.conf" 2>&1)" \
    "OLLAMA_ORIGINS 'http://a.example/path' \(in the environment\): an origin has no path"
OLLAMA_ORIGINS="http://ollama-app.example" "$VRAM" serve --config "$T/any.conf" >"$T/any.log" 2>&1 &
D2=$!
JOBS="$JOBS $D2"
A="http://127.0.0.1:$ANY"
wait_for 10 sh -c "curl -s -m 1 -o /dev/null $A/api/version"
expect_eq "OLLAMA_ORIGINS, no origins = in the file: its origin's preflight 204" \
    "$(code -X OPTIONS -H 'Origin: http://ollama-app.example' -H 'Access-Control-Request-Method: POST' "$A/api/chat")" 204
expect_eq "a listener on every address: Host by number (10.1.2.3:PORT) served" \
    "$(code -H "Host: 10.1.2.3:$ANY" "$A/api/version")" 200
expect_eq "... the machine's name served" "$(code -H "Host: $(hostname):$ANY" "$A/api/version")" 200
expect_eq "... another name 403" "$(code -H "Host: evil.example:$ANY" "$A/api/version")" 403
kill -TERM $D2
wait_for 10 sh -c "! kill -0 $D2 2>/dev/null"
sed "s|^listen = .*|&\norigins = http://file-app.example|" "$T/any.conf" >"$T/any2.conf"
OLLAMA_ORIGINS="http://ollama-app.example" "$VRAM" serve --config "$T/any2.conf" >"$T/any2.log" 2>&1 &
D2=$!
JOBS="$JOBS $D2"
wait_for 10 sh -c "curl -s -m 1 -o /dev/null $A/api/version"
expect_eq "origins = in the file wins over OLLAMA_ORIGINS: the file's 204" \
    "$(code -X OPTIONS -H 'Origin: http://file-app.example' -H 'Access-Control-Request-Method: POST' "$A/api/chat")" 204
expect_eq "... the environment's 403" \
    "$(code -X OPTIONS -H 'Origin: http://ollama-app.example' -H 'Access-Control-Request-Method: POST' "$A/api/chat")" 403
kill -TERM $D2

[ "$FAIL" -eq 0 ] || { echo "# the daemon's log:"; sed 's/^/#   /' "$T/serve.log" | tail -30; }
finish
