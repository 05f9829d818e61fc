#!/bin/sh
# vram serve --check does what vram serve does before it runs a model, as
# the user who runs it (issue 31): a user (made by this test, users.sh)
# copies the shipped example to ~/.config/vram/vram.conf, as the README
# says. For it, and for each way a start can fail (the system's folders,
# a state or logs folder the user may not write, a port taken, a daemon
# already there, libvramcap missing), --check fails exactly when vram serve
# does, with the same message; and where --check passes, vram serve starts.
# Skipped (77) where it cannot make users: not root, or no useradd/setpriv.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/users.sh"
make_users || { echo "1..0 # SKIP needs root, useradd and setpriv to make a user"; exit 77; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP needs $PY (a port taken)"; exit 77; }

H="$T/a/home"
as_a mkdir -p "$H/.config/vram" "$T/a/run"
as_a chmod 700 "$T/a/run"
PORTS=$((10000 + ($$ * 7) % 20000))
# the user's environment: a login session's, on the simulated machine
USERENV="HOME=$H XDG_RUNTIME_DIR=$T/a/run VRAM_SIM=$VRAM_SIM LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
USERENV="$USERENV VRAM_RUN_DIR=$VRAM_RUN_DIR ASAN_OPTIONS=$ASAN_OPTIONS PATH=/usr/bin:/bin"
as_user() { as_a env -i $USERENV "$@"; }
# the message of a failed start, without the log's time and level
msg() { sed -n 's/^.* error vram serve: //p' | head -1; }

# check_then_serve NAME: --check, then vram serve, with the user's
# vram.conf; sets CHECK_RC, CHECK_MSG, SERVE_RC, SERVE_MSG, and stops a
# daemon that started
check_then_serve() {
    CHECK_OUT=$(as_user "$VRAM" serve --check 2>&1)
    CHECK_RC=$?
    CHECK_MSG=$(printf '%s\n' "$CHECK_OUT" | msg)
    # not through a function: its pid would be a subshell's, not vram's
    $AS_A env -i $USERENV "$VRAM" serve >"$T/serve.log" 2>&1 &
    D=$!
    JOBS="$JOBS $D"
    # it either fails at once, or comes up: says it listens
    wait_for 20 sh -c "! kill -0 $D 2>/dev/null || grep -q 'listening on' '$T/serve.log'"
    if kill -0 "$D" 2>/dev/null; then
        SERVE_RC=running
        kill -TERM "$D"
        wait "$D" 2>/dev/null
    else
        wait "$D"
        SERVE_RC=$?
    fi
    SERVE_MSG=$(msg <"$T/serve.log")
}
# same NAME: --check and vram serve agree, with the same message
same() {
    check_then_serve
    if [ "$CHECK_RC" = 0 ]; then
        expect_eq "$1: --check passes, and vram serve starts" "$SERVE_RC" running
    else
        expect_eq "$1: --check fails (exit 1), and so does vram serve" "$CHECK_RC:$SERVE_RC" 1:1
        expect_eq "$1: with the same message" "$CHECK_MSG" "$SERVE_MSG"
    fi
}
shipped() { # the shipped example, its addresses moved to this test's ports
    sed -e "s/127.0.0.1:11500/127.0.0.1:$PORTS/" -e "s/127.0.0.1:9401/127.0.0.1:$((PORTS + 1))/" \
        "$SRC/examples/vram.conf"
}
# the shipped example where its models can run: llama-server on the
# user's PATH (a stand-in), its model file there, no container
as_a mkdir -p "$T/a/bin" "$T/a/models"
as_a sh -c "printf '#!/bin/sh\nexit 1\n' >'$T/a/bin/llama-server'; chmod 755 '$T/a/bin/llama-server'; : >'$T/a/models/qwen2.5-7b-q4.gguf'"
example() {
    shipped | sed -e "s#/models/#$T/a/models/#g" -e '/^; a Hugging Face id/,$d' \
        -e "s#^command  = llama-server#command  = $T/a/bin/llama-server#"
}
put() { as_a sh -c "cat >'$H/.config/vram/vram.conf'"; }

# 1. the shipped example, as the README says, on a machine without
# llama-server, the model file or docker's daemon: --check names each
# model, what it lacks and the fix; vram serve starts, and warns of them
shipped | put
check_then_serve
expect_eq "the shipped example on a bare machine: --check fails (exit 1); vram serve starts" \
    "$CHECK_RC:$SERVE_RC" "1:running"
expect_match "... the missing llama-server named, with the PATH and the fix" "$CHECK_OUT" \
    "\[model qwen-7b\] llama-server: not found on the PATH vram serve gives it \(/usr/bin:/bin\): install it, give its full path in command ="
expect_match "... the missing model file named" "$CHECK_OUT" \
    "\[model qwen-7b\] file = /models/qwen2.5-7b-q4.gguf: No such file or directory: download it there"
expect_match "... docker: its daemon, or docker itself, named" "$CHECK_OUT" \
    "\[model Qwen/Qwen2.5-3B-Instruct\] docker: (its daemon does not answer at unix:///var/run/docker.sock|not found on the PATH)"
expect_match "... vram serve warns of the same" "$(cat "$T/serve.log")" "warning vram serve: .*\[model qwen-7b\] llama-server: not found"

# where its models can run, it passes
example | put
same "the shipped example"
expect_eq "the example passes --check as the user" "$CHECK_RC" 0
expect_match "--check names the user's own places" "$CHECK_OUT" \
    "socket $T/a/run/vram/vram.sock, state $H/.local/state/vram/vram.db, logs $H/.local/state/vram/logs"
expect_match "and says it would start" "$CHECK_OUT" "vram serve would start as you"
expect_eq "the folders are the user's, private" "$(stat -c '%a %U' "$H/.local/state/vram" "$T/a/run/vram" | sort -u)" \
    "700 $USER_A"

# 2. the system daemon's places, as the example named them before: a
# user may not make /run/vram
example | sed "/^\[serve\]/a socket = /run/vram-test-$$/vram.sock" | put
same "socket in a folder a user may not make"
expect_match "the message names the setting and the fix" "$CHECK_MSG" \
    "socket = /run/vram-test-$$/vram.sock: cannot make /run/vram-test-$$ \(Permission denied\): as a user, leave socket out of \[serve\] \(yours is then $T/a/run/vram/vram.sock\)"
example | sed "/^\[serve\]/a state = /var/lib/vram-test-$$/vram.db" | put
same "state in a folder a user may not make"
mkdir -p "$T/rootonly" && chmod 755 "$T/rootonly"
example | sed "/^\[serve\]/a logs = $T/rootonly/logs" | put
same "logs in a folder a user may not write"
expect_match "the logs' message" "$CHECK_MSG" "logs = $T/rootonly/logs: cannot make $T/rootonly/logs \(Permission denied\)"

# 3. the proxy's port taken
example | put
$AS_A "$PY" -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', $PORTS)); s.listen(1)
open('$T/a/taken', 'w').close(); time.sleep(60)" &
TAKER=$!
JOBS="$JOBS $TAKER"
wait_for 5 test -e "$T/a/taken"
same "the proxy's port taken"
expect_match "the port's message" "$CHECK_MSG" "listen = 127.0.0.1:$PORTS: cannot listen on 127.0.0.1:$PORTS: Address already in use"
kill "$TAKER"
wait "$TAKER" 2>/dev/null

# 4. a daemon of the user's already there
example | put
$AS_A env -i $USERENV "$VRAM" serve >"$T/first.log" 2>&1 &
FIRST=$!
JOBS="$JOBS $FIRST"
wait_for 20 sh -c "$AS_A env -i $USERENV '$VRAM' ps >/dev/null 2>&1" || not_ok "the first daemon starts" "$(cat "$T/first.log")"
same "a daemon already answering there"
expect_match "that message" "$CHECK_MSG" "another vram serve answers there already"
kill -TERM "$FIRST"
wait "$FIRST" 2>/dev/null

# 5. libvramcap missing, which the example's fast-swapped model needs
example | put
USERENV="$USERENV VRAM_SHIM=$T/nonexistent.so"
same "libvramcap missing for a model with fast swap"
expect_match "that message" "$CHECK_MSG" "model qwen-7b runs under libvramcap \(swap = fast\), but VRAM_SHIM="

# 6. each thing a model's command needs, one at a time: its program (by
# path, on PATH), its command's model file, docker's daemon (DOCKER_HOST)
USERENV=$(printf '%s' "$USERENV" | sed 's/ VRAM_SHIM=[^ ]*//')
model() { example | sed '/^\[model embedder\]/,$d'; printf '[model m]\ncommand = %s\nvram = 1G\n' "$1"; }
model "$T/a/bin/nope --port \${PORT}" | put
check_then_serve
expect_match "a program by path that is not there: named, with the fix" "$CHECK_OUT" \
    "\[model m\] $T/a/bin/nope: No such file or directory: install it there, or fix the path in command ="
model "FOO=1 exec llama-server-nope -m $T/a/models/none.gguf --port \${PORT}" | put
check_then_serve
expect_match "a program not on PATH (after NAME=VALUE and exec): named" "$CHECK_OUT" "\[model m\] llama-server-nope: not found on the PATH"
expect_match "the command's -m file that is not there: named" "$CHECK_OUT" \
    "\[model m\] its command's model $T/a/models/none.gguf: No such file or directory"
model "$T/a/bin/llama-server -m \"\$HOME/x.gguf\" --port \${PORT} | tee log" | put
check_then_serve
expect_eq "what only the shell knows (\$HOME, a pipeline) is left alone: --check passes" "$CHECK_RC" 0
as_a sh -c "printf '#!/bin/sh\nexit 1\n' >'$T/a/bin/docker'; chmod 755 '$T/a/bin/docker'"
model "docker run --rm -p \${PORT}:8080 ghcr.io/ggml-org/llama.cpp:server" | put
USERENV0=$USERENV
USERENV="$USERENV PATH=$T/a/bin:/usr/bin:/bin DOCKER_HOST=unix://$T/a/docker.sock"
check_then_serve
expect_match "docker with no daemon answering: named, with the fix" "$CHECK_OUT" \
    "\[model m\] docker: its daemon does not answer at unix://$T/a/docker.sock \(No such file or directory\): start it"
$AS_A "$PY" -c "
import socket, time
s = socket.socket(socket.AF_UNIX); s.bind('$T/a/docker.sock'); s.listen(8)
open('$T/a/docker-up', 'w').close(); time.sleep(60)" &
DOCKERD=$!
JOBS="$JOBS $DOCKERD"
wait_for 5 test -e "$T/a/docker-up"
check_then_serve
expect_eq "docker with its daemon answering: --check passes" "$CHECK_RC" 0
kill "$DOCKERD"
wait "$DOCKERD" 2>/dev/null
USERENV=$USERENV0

finish
