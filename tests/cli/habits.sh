#!/bin/sh
# What Ollama's users try first (issue 44, item 4): ollama stop, ls, pull
# and their kin answer with the vram command that does it, in one line, not
# the whole usage; vram run NAME, where NAME is a model's name and no
# program, says how to serve and load it rather than failing with 127;
# vram logs MODEL shows what a model wrote (its last lines, -n, -f), made
# safe on a terminal.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
command -v script >/dev/null || { not_ok "script(1) is installed (bsdutils)"; finish; exit 1; }
run() { OUT=$("$@" 2>&1); RC=$?; }

run "$VRAM" stop llama3.1:8b
expect_eq "vram stop: exit 2" "$RC" 2
expect_match "... names vram unload" "$OUT" "vram unload MODEL stops a model of vram serve"
expect_eq "... in a line and a pointer, not the whole usage" "$(echo "$OUT" | wc -l)" 2
run "$VRAM" ls
expect_match "vram ls: vram ps" "$RC $OUT" "^2 .*vram ps lists the models vram serve serves"
run "$VRAM" pull llama3.1:8b
expect_match "vram pull: downloads nothing, says where to get it and vram fit" "$RC $OUT" \
    "^2 .*ollama pull or hf download; vram fit NAME"
run "$VRAM" frobnicate
expect_match "an unknown word that is no habit: the usage, as before" "$RC $(echo "$OUT" | tr '\n' ' ')" "^2 .*unknown command 'frobnicate'.*commands:"

export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
run "$VRAM" run llama3.1:8b
expect_eq "vram run llama3.1:8b: exit 2 (not 127)" "$RC" 2
expect_match "... serve it and load it, as Ollama's run meant" "$OUT" \
    "'llama3.1:8b' is no command here but reads as a model's name.*vram load llama3.1:8b"
run "$VRAM" run -- Qwen/Qwen2.5-7B-Instruct
expect_match "a hub name too" "$RC $OUT" "^2 vram run: 'Qwen/Qwen2.5-7B-Instruct' is no command here"
mkdir -p "$T/bin"
printf '#!/bin/sh\necho ran "$@"\n' >"$T/bin/tool:v2"
chmod +x "$T/bin/tool:v2"
run env PATH="$T/bin:$PATH" "$VRAM" run --quiet -- tool:v2 arg
expect_eq "a program named like a model that is on PATH runs" "$RC $OUT" "0 ran arg"
run "$VRAM" run --quiet -- ./nope
expect_eq "a program that is not there, and no model's name: 127 as before" "$RC" 127

# vram logs, against a daemon whose model writes lines (one with an escape)
daemon_env 37 700
unset VRAM_SIM
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
cat >"$T/bin/talker" <<EOF2
#!/bin/sh
i=1
while [ \$i -le 150 ]; do echo "line \$i"; i=\$((i + 1)); done
printf 'red \033[31mtext\033[0m\tand a tab\n'
exec "$TESTMODEL" --bytes 64M
EOF2
chmod +x "$T/bin/talker"
{
    serve_head
    printf '\n[model talker]\ncommand = %s\nvram = 1G\naliases = talk:latest\n\n[model quiet]\ncommand = %s --bytes 64M\nvram = 1G\n' \
        "$T/bin/talker" "$TESTMODEL"
} >"$T/vram.conf"
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null; cleanup' EXIT
wait_for 20 "$VRAM" ps >/dev/null 2>&1 || { not_ok "the daemon starts" "$(cat "$T/serve.log")"; finish; exit 1; }
run "$VRAM" logs quiet
expect_match "a model with no log yet: said, exit 2" "$RC $OUT" "^2 vram logs: no log yet"
run "$VRAM" logs nope
expect_match "an unknown model: said, exit 2" "$RC $OUT" "^2 vram logs: no model 'nope'"
"$VRAM" load talker >/dev/null
# its 150 lines, the coloured one, then the test model's own line
wait_for 10 sh -c "'$VRAM' logs talker 2>/dev/null | grep -q 'serving on'"
run "$VRAM" logs talker
expect_eq "vram logs: the last 100 lines" "$(echo "$OUT" | wc -l) $(echo "$OUT" | head -1)" "100 line 53"
run "$VRAM" logs talk -n 3
expect_eq "-n 3, by an alias: the last 3, as written into a pipe" "$(echo "$OUT" | head -2)" \
    "$(printf 'line 150\nred \033[31mtext\033[0m\tand a tab')"
expect_eq "on a terminal: the escape made '?', nothing reaches the terminal" \
    "$(script -qec "'$VRAM' logs talker -n 2" /dev/null | tr -d '\r' | head -1)" "red ?[31mtext?[0m and a tab"
"$VRAM" logs talker -f -n 1 >"$T/follow.out" 2>&1 &
F=$!
JOBS="$JOBS $F"
wait_for 5 grep -q 'and a tab' "$T/follow.out"
# what the model writes next: its log is appended to (as its process would)
echo "written later" >>"$T/logs/talker.log"
wait_for 5 grep -q 'written later' "$T/follow.out" && ok "-f: what is written next follows" ||
    not_ok "-f: what is written next follows" "$(cat "$T/follow.out")"
kill -TERM $DAEMON
wait_for 10 sh -c "! kill -0 $F 2>/dev/null"
wait $F
expect_eq "-f ends when the daemon stops, and says so (exit 1)" "$?:$(tail -1 "$T/follow.out")" \
    "1:vram logs: vram serve ended the log (did it stop?)"
finish
