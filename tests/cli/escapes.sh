#!/bin/sh
# Text another party controls reaches no terminal as commands (issue 28,
# item 9): a process named "\e[2J\e[H" (as any user may name theirs) in
# vram status, doctor and reclaim; a model file whose name holds the same
# in vram fit; a model whose log's last line holds it in vram load, ps and
# the daemon's own log. Each prints the text with '?' for what a terminal
# would have obeyed.
. "$(dirname "$0")/lib.sh"
: "${MKMODEL:?}" "${TESTMODEL:?}"
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
ESC=$(printf '\033')
NAME=$(printf '\033[2J\033[H')
# escapes FILE-or-TEXT: how many lines hold an ESC byte
escapes() { printf '%s\n' "$1" | grep -c "$ESC"; }

# a process that clears the screen of whoever lists it
cp "$SIMALLOC" "$T/$NAME"
"$T/$NAME" --bytes 1G --hold >"$T/job.out" 2>&1 &
J=$!
JOBS="$JOBS $J"
wait_ready "$T/job.out"
kill -STOP $J
for args in "status" "status --processes" "doctor" "reclaim"; do
    # shellcheck disable=SC2086
    OUT=$("$VRAM" $args 2>&1)
    expect_eq "vram $args: no escape reaches the terminal" "$(escapes "$OUT")" 0
    expect_match "vram $args: the name, its controls shown as ?" "$OUT" '\?\[2J\?\[H'
done
kill -9 $J

# a model file whose name is the same
"$MKMODEL" gguf "$T/m.gguf" >/dev/null
python3 - "$T/m.gguf" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:  # the name is in the header; the rest is sparse
    at = f.read(1 << 20).index(b"mkmodel llama")
    f.seek(at)
    f.write(b"\x1b[2J\x1b[Hllama!")
PY
OUT=$("$VRAM" fit "$T/m.gguf" 2>&1)
expect_eq "vram fit: no escape from the file's name" "$(escapes "$OUT")" 0
expect_match "vram fit: the name, its controls shown as ?" "$OUT" '\?\[2J\?\[Hllama!'

# a model whose last words are the same
export VRAM_SOCKET="$T/vram.sock"
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $((10000 + ($$ * 41) % 20000))
min_resident = 0

[model loud]
command = printf '\\033[2J\\033[Hboom\\n'; exit 3
vram = 1G
CONF
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
D=$!
JOBS="$JOBS $D"
wait_for 10 sh -c "'$VRAM' ps >/dev/null 2>&1" || not_ok "the daemon started" "$(cat "$T/serve.log")"
OUT=$("$VRAM" load loud 2>&1)
[ "$(escapes "$(cat "$T/logs/loud.log")")" -ge 1 ] && ok "the model's log holds the escapes (the premise)" ||
    not_ok "the model's log holds the escapes (the premise)" "$(cat "$T/logs/loud.log")"
expect_eq "vram load: no escape from the model's log" "$(escapes "$OUT")" 0
expect_match "vram load: its last line, its controls shown as ?" "$OUT" '\?\[2J\?\[Hboom'
OUT=$("$VRAM" ps 2>&1)
expect_eq "vram ps: no escape in the error column" "$(escapes "$OUT")" 0
expect_match "vram ps: the error, its controls shown as ?" "$OUT" '\?\[2J\?\[Hboom'
kill $D
wait $D 2>/dev/null
expect_eq "the daemon's own log: no escape" "$(escapes "$(cat "$T/serve.log")")" 0
finish
