#!/bin/sh
# vram serve's dashboard (GET /ui) in a real browser: Debian's chromium,
# driven by playwright-core (tests/ui, installed by `npm ci` in
# scripts/check), against the daemon on the simulated driver with two
# models. What is checked is in tests/ui/ui_test.mjs: the login prompt for
# a missing or wrong token, one chart per GPU whose parts add up to the
# card and are drawn at their heights, a state change on screen within 2 s
# of `vram load`, the suspend button (checked with `vram ps`), the log
# followed live, the layout at 1280x720 and 390x844, dark mode, no request
# elsewhere, the page's weight. Screenshots go to the build folder.
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
PORTS=$((20000 + ($$ * 13) % 20000))
LISTEN=$((PORTS + 700))
TOKEN="ui-test-$$"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
budget = 15G
port_base = $PORTS
listen = 127.0.0.1:$LISTEN
token = $TOKEN

[model m1]
command = $TESTMODEL --bytes 2G
vram = 2.5G
gpus = 0
idle = 0
swap = driver

[model m2]
command = $TESTMODEL --bytes 3G
vram = 3.5G
gpus = 1
swap = driver
CONF
setsid "$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.5; pkill -9 -f "$TESTMODEL" 2>/dev/null; cleanup' EXIT
for _ in $(seq 1 100); do
    curl -s -m 1 -o /dev/null "http://127.0.0.1:$LISTEN/ui" && break
    sleep 0.05
done

UI_URL="http://127.0.0.1:$LISTEN" UI_TOKEN="$TOKEN" UI_LOGS="$T/logs" UI_SHOTS="$BUILD" \
    CHROMIUM="$CHROMIUM" node "$SRC/tests/ui/ui_test.mjs"
RC=$?
[ $RC -eq 0 ] || { echo "# the daemon's log:"; sed 's/^/#   /' "$T/serve.log" | tail -40; }
exit $RC
