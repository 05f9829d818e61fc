#!/bin/sh
# vram serve's dashboard (GET /ui) in a real browser: Debian's chromium,
# driven by playwright-core (tests/ui, installed by `npm ci` in
# scripts/check), against the daemon on the simulated driver with two
# models. What is checked is in tests/ui/ui_test.mjs: the login prompt for
# a missing or wrong token, one chart per GPU whose parts add up to the
# card and are drawn at their heights, a state change on screen within 2 s
# of `vram load`, the suspend button (checked with `vram ps`), the log
# followed live, the layout at 1280x720 and 390x844, dark mode, no request
# elsewhere, the page's weight; then (issue 31) the URL `vram ui --no-open`
# prints for a second daemon without a token: the dashboard with its live
# models, a session cookie, while a request without the key (or with the
# cookie alone) gets nothing; and (issue 28) a page of another site that
# cannot read or unload that daemon's models, while a listed origin's
# fetch passes Chromium's own preflight. Screenshots go to the build folder.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}" "${BUILD:?}"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ] || [ ! -d "$SRC/tests/ui/node_modules/playwright-core" ] || ! command -v node >/dev/null; then
    echo "ui: needs $CHROMIUM (apt-get install chromium; scripts/deps --test), node, and"
    echo "playwright-core (npm ci --prefix $SRC/tests/ui; scripts/check does both)"
    # CI installs them: there a missing piece is a failure, not a skip
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
cp "$TESTMODEL" "$T/testmodel-ui"
TESTMODEL="$T/testmodel-ui"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 13) % 20000))
LISTEN=$((PORTS + 700))
L2=$((LISTEN + 1))
OTHER=$((LISTEN + 2)) # the pages of other sites (ui_test.mjs serves them)
METRICS=$((LISTEN + 3))
UIP=$((LISTEN + 4)) # the first daemon's dashboard (ui =); the second's is the kernel's pick
D1="http://127.0.0.1:$UIP"
TOKEN="ui-test-$$"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 15G
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
ui = 127.0.0.1:$UIP
metrics = 127.0.0.1:$METRICS
token = $TOKEN
origins = http://127.0.0.1:$OTHER

[model m1]
command = $TESTMODEL --bytes 2G
vram = 2.5G
gpu = 0
swap = driver

[model m2]
command = $TESTMODEL --bytes 3G
vram = 3.5G
gpu = 1
swap = driver

# a name as people write them, never loaded: the table at 1280x720 must
# still show every row's actions
[model qwen2.5-coder-14b-instruct-q4_k_m]
command = $TESTMODEL --bytes 1G
vram = 1.5G
gpu = 1
swap = driver
CONF
NAMES='["m1","m2","qwen2.5-coder-14b-instruct-q4_k_m"]'
setsid "$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON ${D2:-} ${D3:-} 2>/dev/null; sleep 0.5; pkill -9 -f "$TESTMODEL" 2>/dev/null; cleanup' EXIT
up() { curl -s -m 1 -o /dev/null "$D1/ui"; }
wait_for 5 up || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
wait_for 5 grep -q "listening on" "$T/serve.log" # the log goes out every tick
expect_match "the start-up line names every address" "$(cat "$T/serve.log")" \
    "listening on $T/vram.sock; proxy http://127.0.0.1:$LISTEN .*; dashboard $D1/ui .*; metrics http://127.0.0.1:$METRICS/metrics"

# a second daemon, its proxy without a token: what vram ui is for. Its
# model "page" serves a web page under /m/page/ (as llama-server's own UI,
# or any model's) and keeps the Cookie headers it is sent
cat >"$T/pagemodel.py" <<'PY'
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        with open(sys.argv[1], "a") as f:
            f.write("%s cookie: %s\n" % (self.path, self.headers.get("Cookie", "")))
        body = b"<!doctype html><title>a model's page</title><p>hello" if self.path != "/health" else b"ok"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
PY
printf '[serve]\nsocket = %s/v2.sock\nstate = %s/v2.db\nlogs = %s/logs2\nlisten = 127.0.0.1:%s\nport_base = %s\n\n[model w]\ncommand = %s --bytes 1G\nvram = 1.5G\ngpu = 0\nswap = driver\n\n[model page]\ncommand = python3 %s/pagemodel.py %s/page.cookies\nvram = 1G\ngpu = 1\nswap = driver\n' \
    "$T" "$T" "$T" "$L2" $((PORTS + 500)) "$TESTMODEL" "$T" "$T" >"$T/v2.conf"
"$VRAM" serve --config "$T/v2.conf" >"$T/v2.log" 2>&1 &
D2=$!
JOBS="$JOBS $D2"
up2() { curl -s -m 1 -o /dev/null "http://127.0.0.1:$L2/v1/models"; }
wait_for 5 up2
wait_for 5 grep -q "listening on" "$T/v2.log"
expect_match "without a token, the start-up line says to run vram ui for the dashboard" "$(cat "$T/v2.log")" \
    "dashboard http://127.0.0.1:[0-9]+/ui \(run vram ui: it opens it signed in\)"
"$VRAM" load --socket "$T/v2.sock" w >/dev/null
OPEN=$(env -u DISPLAY -u WAYLAND_DISPLAY "$VRAM" ui --socket "$T/v2.sock" 2>"$T/ui.err")
expect_match "vram ui prints the dashboard's URL with its key" "$OPEN" \
    "^http://127\.0\.0\.1:[0-9]+/ui\?key=[0-9a-f]{64}$"
DASH2=${OPEN%%/ui*}
expect_eq "... on an address of its own, not the proxy's, whose origin the models' pages share" \
    "$([ "$DASH2" != "http://127.0.0.1:$L2" ] && echo own)" own
expect_eq "the proxy's /ui sends a browser there" \
    "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$L2/ui")" "307 $DASH2/ui"
expect_match "... and, without a desktop, says how to open it" "$(cat "$T/ui.err")" 'no desktop here'
expect_eq "vram ui --no-open: the same URL, nothing else said" \
    "$("$VRAM" ui --no-open --socket "$T/v2.sock" 2>&1)" "$OPEN"
expect_match "the key's file is the daemon's user's (and group vram's) only" \
    "$(stat -c %a "$T/v2.sock.ui")" '^6[04]0$'
expect_eq "without the key: nothing of the control API" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$L2/vram/v1/models")" 403
expect_eq "a wrong key: 403" "$(curl -s -o /dev/null -w '%{http_code}' "$DASH2/ui?key=$(printf '%064d' 0)")" 403
expect_eq "the dashboard's address serves no model" "$(curl -s -o /dev/null -w '%{http_code}' "$DASH2/m/w/")" 404
expect_match "vram ui with no daemon there: says so, exit 1" \
    "$({ "$VRAM" ui --no-open --socket "$T/none.sock" 2>&1; echo " rc=$?"; } | tr -d '\n')" 'cannot reach vram serve.* rc=1$'
printf '[serve]\nsocket = %s/v3.sock\nstate = %s/v3.db\nport_base = %s\n\n[model x]\ncommand = true\nvram = 1G\n' \
    "$T" "$T" $((PORTS + 600)) >"$T/v3.conf"
"$VRAM" serve --config "$T/v3.conf" >"$T/v3.log" 2>&1 &
D3=$!
JOBS="$JOBS $D3"
wait_for 5 "$VRAM" ps --socket "$T/v3.sock" >/dev/null 2>&1
expect_match "vram ui of a daemon without listen =: says what to add, exit 1" \
    "$({ "$VRAM" ui --no-open --socket "$T/v3.sock" 2>&1; echo " rc=$?"; } | tr -d '\n')" 'has no listen = address. Add listen = 127.0.0.1:11500.* rc=1$'
kill -TERM $D3

UI_URL="$D1" UI_PROXY="http://127.0.0.1:$LISTEN" UI_TOKEN="$TOKEN" UI_LOGS="$T/logs" UI_SHOTS="$BUILD" \
    UI_OPEN_URL="$OPEN" UI_V2_URL="http://127.0.0.1:$L2" UI_V2_DASH="$DASH2" UI_V2_SOCKET="$T/v2.sock" UI_V2_MODEL=w \
    UI_V2_COOKIES="$T/page.cookies" \
    UI_OTHER_PORT="$OTHER" CHROMIUM="$CHROMIUM" node "$SRC/tests/ui/ui_test.mjs" >"$T/browser.out" 2>&1
cat "$T/browser.out"
B=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$T/browser.out")
[ -n "$B" ] || not_ok "the browser test ran to its end"

# ---- the routes the page uses, as any client sees them ----
S="$T/vram.sock"
P="http://127.0.0.1:$LISTEN"
has() { grep -q -- "$2" "$1" 2>/dev/null; }

# a model's log: its last lines, then followed
printf 'one\r\ntwo\nthree\n' >>"$T/logs/m2.log"
expect_eq "GET /v1/models/m2/log?lines=2: its last two lines" \
    "$(curl -s --unix-socket "$S" "http://x/v1/models/m2/log?lines=2")" "two
three"
expect_match "the log of a model that never started: 404" \
    "$(curl -s -w ' %{http_code}' --unix-socket "$S" "http://x/v1/models/m1/log?lines=1&x=1" -o /dev/null; \
       curl -s -w '%{http_code}' --unix-socket "$S" http://x/v1/models/nosuch/log -o /dev/null)" "404$"
curl -sN -m 20 --unix-socket "$S" "http://x/v1/models/m2/log?follow=1&lines=1" >"$T/follow" 2>/dev/null &
FOLLOW=$!
wait_for 5 has "$T/follow" '^data: three$'
expect_match "follow=1: the last line first, as an event" "$(cat "$T/follow")" '^data: three$'
printf 'car\rriage\nhalf' >>"$T/logs/m2.log"
wait_for 5 has "$T/follow" '^data: carriage$'
expect_match "follow=1: a line added arrives, its \\r taken out" "$(cat "$T/follow")" '^data: carriage$'
printf -- '-done\n' >>"$T/logs/m2.log"
wait_for 5 has "$T/follow" '^data: half-done$'
expect_match "follow=1: a line written in two parts arrives whole" "$(cat "$T/follow")" '^data: half-done$'
: >"$T/logs/m2.log"
printf 'anew\n' >>"$T/logs/m2.log"
wait_for 5 has "$T/follow" '^data: anew$'
expect_match "follow=1: a log cut short says so and starts over" "$(tr '\n' '|' <"$T/follow")" \
    'event: reset\|data: \|\|.*data: anew\|'
kill $FOLLOW 2>/dev/null

# the event stream: the state every second with snapshot=1, the past with history
curl -sN -m 20 --unix-socket "$S" "http://x/v1/events?snapshot=1&history=3" >"$T/live" 2>/dev/null &
LIVE=$!
curl -sN -m 20 --unix-socket "$S" "http://x/v1/events" >"$T/plain" 2>/dev/null &
PLAIN=$!
two_snapshots() { [ "$(grep -c '^event: snapshot$' "$T/live")" -ge 2 ]; }
wait_for 5 two_snapshots
expect_eq "/v1/events?snapshot=1: a snapshot event every second" "$(two_snapshots && echo yes)" yes
expect_eq "the snapshot event is the document of /v1/snapshot" \
    "$(grep -A1 '^event: snapshot$' "$T/live" | sed -n 's/^data: //p' | head -1 | jq -c '[.schema, (.gpus | length)]')" "[1,2]"
expect_eq "a models event with it, the document of /v1/models" \
    "$(grep -A1 '^event: models$' "$T/live" | sed -n 's/^data: //p' | head -1 | jq -c '[.models[].name]')" "$NAMES"
expect_eq "history=3: the last three events come first" \
    "$(sed -n '/^data: {"t_ms"/p' "$T/live" | head -3 | wc -l)" 3
expect_eq "/v1/events without snapshot=1: no snapshot events" "$(grep -c '^event:' "$T/plain")" 0
kill $LIVE $PLAIN 2>/dev/null

# every route under /vram too; on the proxy's address, behind the token
expect_eq "/vram/v1/models on the socket: the same as /v1/models" \
    "$(curl -s --unix-socket "$S" http://x/vram/v1/models | jq -c '[.models[].name]')" "$NAMES"
expect_eq "listen address, /vram/v1/models without the token: 401" \
    "$(curl -s -o /dev/null -w '%{http_code}' "$P/vram/v1/models")" 401
expect_eq "listen address, /vram/v1/models with the token: the models" \
    "$(curl -s -H "Authorization: Bearer $TOKEN" "$P/vram/v1/models" | jq -c '[.models[].name]')" "$NAMES"
H=$(curl -s -D - -o /dev/null "$D1/ui")
expect_match "the dashboard's address, /ui without the token: the page (it holds no data)" "$H" '^HTTP/1.1 200'
expect_match "the page confines itself to its address (Content-Security-Policy)" "$H" \
    "Content-Security-Policy: default-src 'self'"
ETAG=$(printf '%s\n' "$H" | tr -d '\r' | sed -n 's/^ETag: //p')
expect_eq "asked again with its ETag: 304" \
    "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $ETAG" "$D1/ui")" 304
expect_eq "the dashboard's address, /vram/v1/models with the token: the models" \
    "$(curl -s -H "Authorization: Bearer $TOKEN" "$D1/vram/v1/models" | jq -c '[.models[].name]')" "$NAMES"

# the time to first byte of proxied requests, in /v1/models and /metrics
curl -s -m 10 "$P/m/m2/echo" -H "Authorization: Bearer $TOKEN" >/dev/null
expect_eq "a proxied request: m2's last_ttfb_s" \
    "$(curl -s --unix-socket "$S" http://x/v1/models/m2 | jq '.last_ttfb_s > 0 and .inflight == 0')" true
expect_match "/metrics: the time to first byte" "$(curl -s --unix-socket "$S" http://x/metrics)" \
    'vram_model_last_seconds\{model="m2",kind="first_byte"\} 0\.[0-9]+'

# what a page of another site could make a browser do to the socket (forwarded, say, by ssh -L)
expect_eq "a browser that reached the socket by another name (DNS rebinding): 403" \
    "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$S" -H 'Host: evil.example:8080' \
        -H 'Sec-Fetch-Site: same-origin' http://x/v1/models)" 403
expect_eq "a browser's form POST (not JSON) from another site: 403" \
    "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$S" -H 'Host: localhost:8080' \
        -H 'Origin: http://evil.example' -H 'Content-Type: text/plain' -d x http://x/v1/models/m2/unload)" 403
expect_eq "... and m2 still runs" "$("$VRAM" ps --json | jq -r '.models[] | select(.name == "m2") | .state')" ready
expect_eq "the page's own POST (JSON, by localhost) goes through" \
    "$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$S" -H 'Host: localhost:8080' \
        -H 'Origin: http://localhost:8080' -H 'Content-Type: application/json' -d '{}' \
        http://x/v1/models/m2/unload)" 202

# without a token, the control API stays off the proxy's address
expect_eq "listen without a token: /vram/... refused (403)" \
    "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$L2/vram/v1/models")" 403
kill -TERM $D2 2>/dev/null
wait_for 10 sh -c "! kill -0 $D2 2>/dev/null"
expect_eq "the daemon's exit takes the key's file with it" "$(test -e "$T/v2.sock.ui" && echo there || echo gone)" gone

if [ -n "$B" ]; then
    PASS=$((PASS + ${B% *}))
    FAIL=$((FAIL + ${B#* }))
fi
[ "$FAIL" -eq 0 ] || { echo "# the daemon's log:"; sed 's/^/#   /' "$T/serve.log" | tail -40; }
finish
