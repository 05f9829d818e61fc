#!/bin/sh
# Users and models as mutually distrusting tenants of one machine (issue
# 28), played by two unprivileged users this test creates (A and B,
# users.sh) beside root's vram serve, on one simulated machine (two 16 GiB
# GPUs; a notebook holds 1 GiB of GPU 0):
#   5   root's daemon places no model in memory a user's `vram run` slice
#       promised, and every model of the daemon (capped or not) is a
#       promise `vram run` sees;
#   10  `vram reclaim --yes --all-users` never kills a process that took the
#       pid of its target during the grace period (in a PID namespace of the
#       test's, where the pid can be handed on at will);
#   11  the models' logs (prompts, answers) are the daemon's user's and its
#       socket's group's: another user can neither read nor list them;
#   12  a user cannot forge nor block the record another user's `vram
#       suspend` leaves for `vram resume --gpu`;
#   13  no line a model wrote reaches another user (issue 42, item 3): a
#       proxied request's error carries none (B once got A's prompt as
#       "its log: ..."), and the daemon's state (state.db, its -wal and
#       -shm) is the daemon's user's and its socket's group's;
#   14  a discovered model's file, in a store A may write, swapped by A for
#       a link to B's 0600 GGUF after the scan: root's server never reads
#       B's file (issue 42, item 2).
# Skipped (77) where it cannot make users: not root, or no useradd/setpriv.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/users.sh"
: "${TESTMODEL:?}" "${SWAPMODEL:?}" "${MKMODEL:?}"
make_users || { echo "1..0 # SKIP needs root, useradd and setpriv to make two users"; exit 77; }
cp "$SIMALLOC" "$T/bin/simalloc"
chmod a+rx "$T/bin/simalloc"
SIMALLOC="$T/bin/simalloc"
cp "$TESTMODEL" "$T/bin/testmodel-tenants"
chmod a+rx "$T/bin/testmodel-tenants"
TM="$T/bin/testmodel-tenants"
trap 'pkill -9 -f "^$TM" 2>/dev/null; cleanup' EXIT

run() { OUT=$("$@" 2>&1); RC=$?; }
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 37) % 20000))

# ---- 11: an older version's logs, readable by all; the daemon closes them ----
mkdir -m 755 "$T/logs"
echo "an old prompt" >"$T/logs/m1.log"
chmod 644 "$T/logs/m1.log"
cat >"$T/bin/mute.py" <<'PY'
import os, socket
print("A asked: the launch code is 1111", flush=True)
s = socket.create_server(("127.0.0.1", int(os.environ["PORT"])))
while True:
    s.accept()[0].close()
PY
{
    serve_head
    cat <<CONF
min_resident = 0
listen = 127.0.0.1:$((PORTS + 900))
tokens = a:key-of-a, b:key-of-b

# uncapped, holding far less than its share: its reservation shows (item 5)
[model m1]
command = $TM --bytes 1G
vram = 10G
gpu = 1
swap = driver

[model m0]
command = $TM --bytes 1500M
vram = 2G
gpu = 0
swap = driver

# 13: models whose last log line is A's prompt: one fails to start, one
# takes a request and closes without an answer
[model crashy]
command = echo "A asked: the launch code is 0000"; exit 3
vram = 1G
gpu = 0

[model mute]
command = python3 $T/bin/mute.py
health = none
vram = 1G
gpu = 0
CONF
} >"$T/vram.conf"
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
wait_for 10 sh -c "'$VRAM' ps >/dev/null 2>&1" || not_ok "root's daemon started" "$(cat "$T/serve.log")"
run "$VRAM" load m1
expect_eq "m1 loads" "$RC" 0
run timeout 5 $AS_A cat "$T/logs/m1.log"
expect_eq "11: A cannot read the model's log" "$RC" 1
run timeout 5 $AS_A ls "$T/logs"
expect_eq "11: nor list the logs" "$RC" 2
expect_eq "11: the log is 0640, the folder 0750" "$(stat -c %a "$T/logs/m1.log") $(stat -c %a "$T/logs")" \
    "640 750"
expect_eq "11: in the socket's group" "$(stat -c %G "$T/logs/m1.log") $(stat -c %G "$T/logs")" \
    "$(stat -c %G "$T/vram.sock") $(stat -c %G "$T/vram.sock")"
expect_match "11: root still reads it, old lines and new" "$(cat "$T/logs/m1.log")" "an old prompt"

# ---- 13: no model output in another user's errors, nor in state they can read ----
P13="http://127.0.0.1:$((PORTS + 900))"
run timeout 30 $AS_B curl -s -H 'Authorization: Bearer key-of-b' "$P13/v1/chat/completions" \
    -d '{"model":"crashy","messages":[]}'
expect_match "13: B's request to a model that cannot start: an error" "$OUT" 'crashy'
expect_eq "13: ... without A's prompt from the model's log" "$(printf '%s' "$OUT" | grep -c 'launch code')" 0
wait_for 10 grep -q 'launch code is 1111' "$T/logs/mute.log"
run timeout 30 $AS_B curl -s -H 'Authorization: Bearer key-of-b' "$P13/m/mute/v1/models"
expect_match "13: B's request to a model that closes unanswered: did not answer" "$OUT" 'mute did not answer'
expect_eq "13: ... without A's prompt from the model's log" "$(printf '%s' "$OUT" | grep -c 'launch code')" 0
expect_match "13: root (the socket's people) still sees the log's line in vram ps" \
    "$("$VRAM" ps 2>&1)" 'crashy.*launch code is 0000'
run timeout 5 $AS_A cat "$T/vram.db"
expect_eq "13: A cannot read the daemon's state" "$RC" 1
expect_eq "13: the state and its -wal, -shm: 0640, the socket's group" \
    "$(stat -c '%a %G' "$T/vram.db" "$T/vram.db-wal" "$T/vram.db-shm" | sort -u)" "640 $(stat -c %G "$T/vram.sock")"

# ---- 5b: root's uncapped model is a promise A's admission sees ----
# m1's share is 10G on GPU 1, of which it holds 1G and a context: A's 8G
# would take what it may still grow into
run timeout 10 $AS_A "$VRAM" run --gpu 1 --vram 8G -- true
expect_eq "5: A's 8G beside root's uncapped 10G model: refused (exit 1)" "$RC" 1
expect_match "5: naming the model's promise, its user's (vram-model, whom root's daemon runs models as)" \
    "$OUT" "the largest promise there: .*user vram-model's"
# what m1 already holds is not counted twice: 5G fits beside the rest
try5() { timeout 10 $AS_A "$VRAM" run --quiet --gpu 1 --vram 5G -- true >"$T/a5.out" 2>&1; }
wait_for 10 try5
expect_eq "5: A's 5G beside it: admitted (what m1 holds counts once)" "$?" 0

# ---- 5a: A's 13G slice on GPU 0; root's daemon places no model in it ----
$AS_A "$VRAM" run --quiet --gpu 0 --vram 13G -- sh -c "
    '$SIMALLOC' --bytes 256M --hold >'$T/shared/a1.out' 2>&1 &
    until [ -e '$T/shared/go' ]; do sleep 0.05; done
    exec '$SIMALLOC' --bytes 12G --hold >'$T/shared/a2.out' 2>&1" >"$T/a13.out" 2>&1 &
A13=$!
JOBS="$JOBS $A13"
wait_for 10 grep -qs '^ready' "$T/shared/a1.out" || not_ok "A's slice started" "$(cat "$T/a13.out")"
run "$VRAM" load m0 --timeout 3s
expect_eq "5: root's m0 (2G) is not placed in A's promise: the load fails" "$RC" 1
expect_eq "5: and m0 holds nothing on GPU 0" "$("$VRAM" ps --json | jq -r '.models[] | select(.name == "m0") | .state')" \
    stopped
touch "$T/shared/go"
wait_for 10 grep -qs '^ready\|^oom' "$T/shared/a2.out"
expect_match "5: A gets the rest of its 13G slice (12G more)" "$(cat "$T/shared/a2.out")" "^ready"
kill "$A13" 2>/dev/null
pkill -f "^$SIMALLOC"
wait "$A13" 2>/dev/null

kill "$DAEMON"
wait "$DAEMON" 2>/dev/null
pkill -9 -f "^$TM"

# ---- 12: B's record squatted and forged by A ----
$AS_B "$SIMALLOC" --bytes 256M --hold >"$T/b/v.out" 2>&1 &
V=$!
JOBS="$JOBS $V"
wait_for 10 grep -qs '^ready' "$T/b/v.out" || not_ok "B's process started" "$(cat "$T/b/v.out")"
# A takes every name B's record could have, in the run directory everyone
# writes: the old one (suspended-PID) and B's folder, with a forged record
# in it sending B's process to GPU 0
START=$(awk '{print $22}' "/proc/$V/stat")
as_a sh -c "echo '$START GPU-16000000-0000-4000-8000-000000000000 1' >'$T/shared/suspended-$V'"
as_a mkdir -m 755 "$T/shared/vram-suspended-$UID_B"
as_a sh -c "echo '$START GPU-16000000-0000-4000-8000-000000000000 1' >'$T/shared/vram-suspended-$UID_B/$V'"
run timeout 20 $AS_B "$VRAM" suspend --driver "$V"
expect_eq "12: B suspends its process" "$RC" 0
expect_eq "12: B's record is not blocked by A's names (no warning)" \
    "$(echo "$OUT" | grep -c 'will not know the GPU')" 0
run timeout 20 $AS_B "$VRAM" resume "$V" --gpu 1
expect_eq "12: B resumes it onto GPU 1, by its own record" "$RC" 0
expect_match "12: on GPU 1" "$OUT" "resumed pid $V on GPU 1"
kill "$V" 2>/dev/null

# ---- 14: a link swapped into a store after the scan ----
# A's Ollama store (A pulled tiny:1b into it); B's model, 0600 in B's folder
S14="$T/shared/ollama"
D14=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
as_a mkdir -p "$S14/blobs" "$S14/manifests/registry.ollama.ai/library/tiny"
"$MKMODEL" gguf "$T/tiny.gguf" 0.05 >/dev/null
as_a cp "$T/tiny.gguf" "$S14/blobs/sha256-$D14"
as_a sh -c "printf '{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:%s\",\"size\":1}]}' $D14 >'$S14/manifests/registry.ollama.ai/library/tiny/1b'"
"$MKMODEL" gguf "$T/b/secret.gguf" 0.05 >/dev/null
chown "$USER_B:$USER_B" "$T/b/secret.gguf"
chmod 600 "$T/b/secret.gguf"
mkdir -p "$T/d14"
ln -sf "$SRC/tests/helpers/fake-llama-server" "$T/d14/llama-server"
printf '[serve]\nsocket = %s/d14.sock\nstate = %s/d14.db\nlogs = %s/d14logs\nport_base = %s\nllama_server = %s\ndiscover = ollama\ndiscover_ctx = 1024\n' \
    "$T" "$T" "$T" $((PORTS + 800)) "$T/d14/llama-server" >"$T/d14.conf"
OLLAMA_MODELS="$S14" FAKE_LLAMA_LOG="$T/d14/args" FAKE_LLAMA_SCALE=16 VRAM="$VRAM" TESTMODEL="$TM" \
    "$VRAM" serve --config "$T/d14.conf" >"$T/d14.log" 2>&1 &
D14P=$!
JOBS="$JOBS $D14P"
wait_for 10 sh -c "'$VRAM' ps --socket '$T/d14.sock' 2>/dev/null | grep -q '^tiny:1b'" ||
    not_ok "14: the daemon serving A's store started" "$(cat "$T/d14.log")"
# after the scan, A puts a link to B's file where its blob was
as_a rm "$S14/blobs/sha256-$D14"
as_a ln -s "$T/b/secret.gguf" "$S14/blobs/sha256-$D14"
run timeout 30 "$VRAM" load --socket "$T/d14.sock" tiny:1b
expect_eq "14: the model whose blob is now a link out of the store does not load" "$RC" 1
expect_match "14: ... saying why" "$OUT" 'its file is a link now, not followed'
expect_eq "14: root's server never read B's file" "$(cat "$T/d14/args.files" 2>/dev/null | grep -c 'secret')" 0
kill -TERM $D14P
wait $D14P 2>/dev/null

# ---- 10: the pid reused during the grace period ----
# In a PID namespace of the test's own, ns_last_pid hands the target's pid
# to the next process made: B's innocent sleeper, started the moment the
# target (B's stopped job) exits on TERM, while reclaim waits out its grace.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    # the target's parent reaps it at once, so that its pid is free again
    unshare --pid --fork --mount-proc sh -c "
        sh -c '$AS_B \"$SIMALLOC\" --bytes 1G --hold >$T/shared/victim.out 2>&1 &
            echo \$! >$T/shared/victim.pid; wait' &
        until grep -qs '^ready' '$T/shared/victim.out'; do sleep 0.05; done
        V=\$(cat '$T/shared/victim.pid')
        kill -STOP \$V
        (   while kill -0 \$V 2>/dev/null; do :; done
            echo \$((V - 1)) >/proc/sys/kernel/ns_last_pid
            $AS_B sleep 60 &
            wait ) &
        '$VRAM' reclaim --yes --all-users --grace 2 >'$T/reclaim.out' 2>&1
        P=\$(pgrep -x sleep)
        echo \"victim \$V sleeper \${P:-none}\" >'$T/reuse.out'
        [ -n \"\$P\" ] && kill \$P
        wait" >"$T/ns.out" 2>&1
    read -r _ VICTIM _ SLEEPER <"$T/reuse.out" 2>/dev/null
    if [ -z "${SLEEPER:-}" ]; then
        not_ok "10: the part in a PID namespace ran" "$(cat "$T/ns.out" "$T/reclaim.out" 2>/dev/null)"
    elif [ "$SLEEPER" = none ]; then
        not_ok "10: B's sleeper, which took the target's pid, survives reclaim" \
            "$(cat "$T/reuse.out" "$T/reclaim.out" "$T/ns.out")"
    elif [ "$SLEEPER" = "$VICTIM" ]; then
        ok "10: B's sleeper, which took the target's pid ($VICTIM) in the grace period, survives reclaim"
        expect_match "10: reclaim stopped the target" "$(cat "$T/reclaim.out")" "stopping $VICTIM \(simalloc"
    else
        not_ok "10: the sleeper took the target's pid" "victim $VICTIM, sleeper $SLEEPER"
    fi
else
    echo "# skipped 10: no PID namespace can be made here (unshare --pid)"
fi

finish
