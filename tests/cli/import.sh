#!/bin/sh
# vram import llama-swap on llama-swap configurations of different shapes
# (tests/fixtures/llama-swap, written from llama-swap's documentation):
# each is imported, accepted by vram serve --check, and served: a request
# to every model under its llama-swap name (and some aliases) through the
# proxy. Stand-ins take the place of llama-server, vllm and docker (on
# PATH here): whatever their arguments, a test model on $PORT, which vram
# serve sets (tests/helpers/testmodel); the fake docker also keeps a
# container's name, for docker stop. What is checked of each file is said
# with each check: macros, ttl's meaning, groups, aliases, cmdStop, env,
# useModelName, checkEndpoint, hooks, the notes for the rest.
. "$(dirname "$0")/lib.sh"
: "${TESTMODEL:?}"
FIX="$SRC/tests/fixtures/llama-swap"
if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "import: needs python3-yaml (apt-get install python3-yaml; scripts/deps --test)"
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
cp "$TESTMODEL" "$T/testmodel-import"
TESTMODEL="$T/testmodel-import"
daemon_env 31 900
unset OLLAMA_KEEP_ALIVE OLLAMA_MAX_LOADED_MODELS OLLAMA_MAX_QUEUE
export LS_MODELS_DIR="$T/store"

mkdir -p "$T/bin"
for prog in llama-server vllm; do
    printf '#!/bin/sh\n# stand-in for %s: a test model on $PORT\nexec "%s" --bytes 64M --chunks 2 --chunk-ms 5\n' \
        "$prog" "$TESTMODEL" >"$T/bin/$prog"
done
# argv-server: what llama-swap's cmd handed it, a word a line; stop-helper:
# what its cmdStop handed it, then the model's end
cat >"$T/bin/argv-server" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T/argv.log"
exec "$TESTMODEL" --bytes 64M --chunks 2 --chunk-ms 5
EOF
cat >"$T/bin/stop-helper" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$T/stop.log"
kill "\$1"
EOF
cat >"$T/bin/docker" <<EOF
#!/bin/sh
# stand-in for docker: run starts a test model (its pid kept under the
# container's --name), stop NAME ends it
case \$1 in
run)
    prev=
    for a; do [ "\$prev" = --name ] && echo \$\$ >"$T/docker-\$a.pid"; prev=\$a; done
    exec "$TESTMODEL" --bytes 64M --chunks 2 --chunk-ms 5 ;;
stop)
    echo "stop \$2" >>"$T/docker.log"
    kill "\$(cat "$T/docker-\$2.pid")" ;;
esac
EOF
chmod +x "$T/bin"/*
export PATH="$T/bin:$PATH"
# docker's daemon, as --check asks for it: a socket that takes a connection
python3 -c "
import socket, time
s = socket.socket(socket.AF_UNIX); s.bind('$T/docker.sock'); s.listen(8); time.sleep(3600)" &
JOBS="$JOBS $!"
export DOCKER_HOST="unix://$T/docker.sock"
unset DOCKER_CONTEXT

ids() { python3 -c 'import sys, yaml; print("\n".join(yaml.safe_load(open(sys.argv[1]))["models"]))' "$1"; }

# import FIXTURE: its vram.conf in $T/NAME.conf, its notes in $T/NAME.notes
import_it() {
    "$VRAM" import llama-swap "$FIX/$1.yaml" --listen "127.0.0.1:$LISTEN" >"$T/$1.conf" 2>"$T/$1.notes"
    expect_eq "$1: imported (exit 0)" "$?" 0
}
conf() { awk -v h="[$1]" '$0 == h { p = 1; print; next } p && /^\[/ { p = 0 } p' "$T/$2.conf"; }

# serve FIXTURE [TOKEN]: the imported file with this test's socket, state,
# logs and ports, checked, served: every model of the YAML asked for by
# name through the proxy
serve_it() {
    f=$1
    sed -i -e '/^port_base = /d' -e "/^\[serve\]/a socket = $T/vram.sock\nstate = $T/$f.db\nlogs = $T/logs-$f\nport_base = $PORTS\nhost_budget = 1G" "$T/$f.conf"
    # the model files the llama-swap file names (/models/...), made here
    # under $T/files: --check looks for them
    grep '^file = ' "$T/$f.conf" | sed 's/^file = //' | sort -u | while read -r p; do
        case $p in /*) n="$T/files$p" ;; *) n="$T/files/$p" ;; esac
        mkdir -p "$(dirname "$n")" && : >"$n"
        sed -i "s#\([ =]\)$p\$#\1$n#; s#\([ =]\)$p #\1$n #g" "$T/$f.conf"
    done
    OUT=$("$VRAM" serve --check --config "$T/$f.conf" 2>&1)
    expect_eq "$f: vram serve --check accepts it" "$?" 0
    [ -n "$OUT" ] && echo "$OUT" | grep -q "models" || echo "$OUT" | sed 's/^/#   /'
    "$VRAM" serve --config "$T/$f.conf" >"$T/$f.serve.log" 2>&1 &
    DAEMON=$!
    JOBS="$JOBS $DAEMON"
    AUTH=${2:+Authorization: Bearer $2}
    up() { curl -s -m 1 -o /dev/null ${AUTH:+-H "$AUTH"} "$P/v1/models"; }
    wait_for 10 up || { not_ok "$f: the daemon starts" "$(tail -5 "$T/$f.serve.log")"; return 1; }
    expect_eq "$f: /v1/models lists the llama-swap IDs" \
        "$(curl -s ${AUTH:+-H "$AUTH"} "$P/v1/models" | jq -r '.data[].id' | sort)" "$(ids "$FIX/$f.yaml" | sort)"
    bad=""
    for id in $(ids "$FIX/$f.yaml"); do
        chat "$id" | grep -q 'data: \[DONE\]' || bad="$bad $id"
    done
    expect_eq "$f: every model answers through the proxy under its llama-swap ID" "$bad" ""
}
chat() { curl -sN -m 60 ${AUTH:+-H "$AUTH"} "$P/v1/chat/completions" -d "{\"model\":\"$1\",\"stream\":true,\"messages\":[]}"; }
stop_it() {
    kill -TERM $DAEMON 2>/dev/null
    wait_for 20 sh -c "! kill -0 $DAEMON 2>/dev/null" || not_ok "$1: the daemon stops" "$(tail -5 "$T/$1.serve.log")"
    [ "$FAIL" -eq 0 ] || { echo "# $1's daemon:"; tail -15 "$T/$1.serve.log" | sed 's/^/#   /'; }
}
state() { "$VRAM" ps --json | jq -r ".models[] | select(.name == \"$1\") | .$2"; }
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.5; pkill -9 -f "$TESTMODEL" 2>/dev/null; cleanup' EXIT

# minimal: llama-swap runs one model at a time, none unloaded for time
import_it minimal
expect_match "minimal: one model at a time (max_loaded = 1), never unloaded for time" \
    "$(conf serve minimal | tr '\n' ' ')" "keep_alive = forever .*max_loaded = 1"
expect_match "minimal: a multi-line cmd joined" "$(conf 'model model3' minimal)" \
    "^command = llama-server --port \\$\{PORT\} -m /models/third_model.gguf --ctx-size 8192 --jinja"
expect_eq "minimal: nothing to say" "$(cat "$T/minimal.notes")" ""
serve_it minimal
expect_eq "minimal: one model loaded at a time" \
    "$("$VRAM" ps --json | jq '[.models[] | select(.state == "ready" or .state == "busy")] | length')" 1
stop_it minimal

# macros: expanded as llama-swap does; ttl 60 and ttl 0 (never, not vram's 0)
import_it macros
expect_match "macros: folded, nested, the model's over the file's, env., MODEL_ID; the comment out" \
    "$(conf 'model llama' macros)" \
    "^command = llama-server --port \\$\{PORT\} --model $T/store/models/llama-8B-Q4_K_M.gguf --ctx-size 16384 --temperature 0.7 --alias llama\$"
expect_match "macros: a macro made of another (--ctx-size 4096)" "$(conf 'model qwen' macros)" "^command = .* --ctx-size 4096 -m "
expect_match "macros: ttl 60 is keep_alive = 60s" "$(conf 'model llama' macros)" "^keep_alive = 60s"
expect_match "macros: ttl 0 is keep_alive = forever (vram's 0 would unload at once)" "$(conf 'model qwen' macros)" "^keep_alive = forever"
expect_match "macros: healthCheckTimeout is start_timeout; startPort port_base" \
    "$(conf 'model smollm' macros; conf serve macros)" "start_timeout = 60s.*|port_base = 10001"
expect_match "macros: logLevel has no equivalent: said on stderr" "$(cat "$T/macros.notes")" "logLevel: not carried"
expect_match "... and in the file" "$(conf serve macros)" "^; logLevel: not carried"
serve_it macros
expect_eq "macros: the running models keep their ttl's meaning (60 s; forever)" \
    "$(state llama keep_alive_ms) $(state qwen keep_alive_ms)" "60000 null"
stop_it macros

# groups: max_loaded from the groups, persistent as pinned, aliases, env,
# useModelName, checkEndpoint, preload, apiKeys
import_it groups
expect_match "groups: at most 4 at once (group1 one, group2 two, forever one)" "$(conf serve groups)" "^max_loaded = 4"
expect_match "groups: persistent is pinned" "$(conf 'model forever-modelA' groups)" "^pinned = yes"
expect_match "groups: hooks.on_startup.preload" "$(conf serve groups)" "^preload = llama"
expect_match "groups: apiKeys' first is the token, the second one of tokens" "$(conf serve groups | tr '\n' '|')" \
    "token = sk-hunter2\|tokens = apikey2:sk-gyCPiKUcIfPlaM4OSMZekkprgijPx6\|"
L=$(conf 'model llama' groups)
expect_match "groups: aliases, useModelName, CUDA_VISIBLE_DEVICES as gpu, env quoted" "$(echo "$L" | tr '\n' '|')" \
    "aliases = gpt-4o-mini, gpt-3.5-turbo\|upstream_name = qwen:qwq\|gpu = 0\|.*env = LLAMA_ARG_THREADS=8\|    GREETING=\"hello there\""
expect_match "groups: checkEndpoint is health" "$(conf 'model embed' groups)" "^health = /v1/models"
serve_it groups sk-hunter2
expect_eq "groups: without the token, 401" "$(curl -s -o /dev/null -w '%{http_code}' "$P/v1/models")" 401
expect_eq "groups: the second of apiKeys is accepted too" \
    "$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sk-gyCPiKUcIfPlaM4OSMZekkprgijPx6' "$P/v1/models")" 200
expect_match "groups: an alias answers (gpt-4o-mini)" "$(chat gpt-4o-mini)" 'data: \[DONE\]'
wait_for 5 grep -q "llama: preloaded" "$T/groups.serve.log"
expect_match "groups: llama was preloaded at start" "$(cat "$T/groups.serve.log")" "llama: preloaded"
PID=$(state llama pid)
expect_eq "groups: llama's process has its env" "$(tr '\0' '\n' <"/proc/$PID/environ" | grep -E '^(GREETING|LLAMA_ARG_THREADS)=' | sort | tr '\n' ' ')" \
    "GREETING=hello there LLAMA_ARG_THREADS=8 "
stop_it groups

# docker: cmdStop with ${MODEL_ID}, unloadTimeout, a fixed port made ${PORT}
import_it docker
expect_match "docker: cmdStop is stop, \${MODEL_ID} filled in" "$(conf 'model docker-llama' docker)" "^stop = docker stop docker-llama"
expect_match "docker: unloadTimeout is stop_timeout (the file's, and a model's own)" \
    "$(conf 'model docker-llama' docker | grep stop_timeout) $(conf 'model Q3-30B-CODER-VLLM' docker | grep stop_timeout)" \
    "stop_timeout = 15s stop_timeout = 20s"
expect_match "docker: proxy http://127.0.0.1:8999: the cmd's port is \${PORT}" "$(conf 'model fixed-port' docker)" \
    "^command = llama-server --port \\$\{PORT\} -m /models/fixed.gguf --ctx-size 8192"
expect_match "docker: no model file in a container's cmd: a size to set, said" "$(cat "$T/docker.notes")" \
    "models.docker-llama: its cmd names no model file"
serve_it docker
"$VRAM" unload docker-llama >/dev/null
gone() { [ "$(state docker-llama state)" = stopped ]; }
wait_for 10 gone && ok "docker: unload runs its cmdStop, and the model stops" || not_ok "docker: unload" "$("$VRAM" ps)"
expect_match "... docker stop docker-llama ran" "$(cat "$T/docker.log" 2>/dev/null)" "^stop docker-llama\$"
stop_it docker

# names: IDs with '/' and ':', useModelName, checkEndpoint: none, the rest said
import_it names
expect_match "names: a Hugging Face ID is a vram name" "$(cat "$T/names.conf")" "^\[model Qwen/Qwen2.5-7B-Instruct\]"
Q=$(conf 'model Qwen/Qwen2.5-7B-Instruct' names)
expect_match "names: checkEndpoint none, useModelName, concurrencyLimit" "$(echo "$Q" | tr '\n' '|')" \
    "health = none\|upstream_name = qwen\|concurrency = 4"
expect_match "names: filters and metadata said" "$(cat "$T/names.notes")" "Qwen2.5-7B-Instruct: filters.stripParams: not carried"
serve_it names
expect_match "names: its alias meta-llama/Llama-3.2-1B-Instruct answers" "$(chat meta-llama/Llama-3.2-1B-Instruct)" 'data: \[DONE\]'
stop_it names

# anchors: merge keys followed; globalTTL; ttl -1 is the global one
import_it anchors
expect_match "anchors: globalTTL 600 is [serve] keep_alive = 600s" "$(conf serve anchors)" "^keep_alive = 600s"
expect_match "anchors: a merged ttl and env" "$(conf 'model coder' anchors | tr '\n' '|')" "keep_alive = 120s\|.*env = LLAMA_ARG_FLASH_ATTN=on"
expect_eq "anchors: ttl -1 is the global one: no keep_alive of its own" "$(conf 'model chat' anchors | grep -c keep_alive)" 0
serve_it anchors
stop_it anchors

# current: the shape of llama-swap's current documentation (routing:,
# setParamsByID, macros in any value, an {id:} alias, several apiKeys, a
# cmd run with no shell), every key it documents named when not carried
export LS_API_KEY=sk-third LS_PWNED="$T/pwned"
unset LS_ONLY_IN_A_COMMENT
import_it current
expect_match "current: routing's groups: at most 3 at once (swapping one, together two)" \
    "$(conf serve current)" "^max_loaded = 3"
expect_match "current: every apiKey carried, the one from \${env.LS_API_KEY} too" \
    "$(conf serve current | tr '\n' '|')" "token = sk-first\|tokens = apikey2:sk-second, apikey3:sk-third\|"
G=$(conf 'model gpt' current | tr '\n' '|')
expect_match "current: setParamsByID's keys and an {id:} alias are aliases" "$G" "\|aliases = gpt-4o-mini, gpt-4o, gpt:high\|"
expect_match "current: macros in ttl, useModelName, env" "$G" \
    "keep_alive = 60s\|.*upstream_name = openai/gpt\|gpu = 0\|.*env = SERVED_AS=gpt\|"
expect_match "current: routing.scheduler's fifo priority 10 is priority = 15" "$G" "\|priority = 15\|"
missing=""
for key in logLevel logTimeFormat logToStdout metricsMaxInMemory captureBuffer store ui performance \
    sendLoadingState includeAliasesInList upstream profiles selectors peers \
    models.gpt:.filters.stripParams models.gpt:.filters.setParams: models.gpt:.filters.setParamsByID \
    models.gpt:.metadata models.gpt:.sendLoadingState models.gpt:.timeouts models.gpt:.compat \
    models.gpt:.capabilities models.qwen:.unlisted; do
    grep -q "current.yaml: $key" "$T/current.notes" || missing="$missing $key"
done
expect_eq "current: each key with no equivalent is named, with why" "$missing" ""
expect_eq "current: no key is unknown to the import" "$(grep -c 'not read' "$T/current.notes")" 0
serve_it current sk-first
for key in sk-second sk-third; do
    expect_match "current: apiKeys' $key is accepted too" \
        "$(curl -sN -m 60 -H "Authorization: Bearer $key" "$P/v1/chat/completions" -d '{"model":"gpt","stream":true,"messages":[]}')" 'data: \[DONE\]'
done
expect_match "current: gpt:high (a setParamsByID key) answers" "$(chat gpt:high)" 'data: \[DONE\]'
expect_match "current: gpt-4o (an {id:} alias) answers" "$(chat gpt-4o)" 'data: \[DONE\]'
expect_eq "current: the cmd's words reach the server as llama-swap hands them: ';', \$(...), backticks, \$HOME, ~ as they are" \
    "$(sed 2d "$T/argv.log" 2>/dev/null | tr '\n' '|')" \
    "--port|;|two words|\$(touch $T/pwned)|\`touch|$T/pwned\`|a;b|\$HOME|~/x|--quote=it's|"
expect_eq "... and no shell ran them (nothing touched)" "$(ls "$T/pwned" 2>/dev/null)" ""
PID=$(state literal pid)
"$VRAM" unload literal >/dev/null
gone() { [ "$(state literal state)" = stopped ]; }
wait_for 10 gone || not_ok "current: unload stops literal" "$("$VRAM" ps)"
expect_eq "current: cmdStop's words too, \${PID} filled in" "$(tr '\n' '|' <"$T/stop.log" 2>/dev/null)" "$PID|;|kill 1|"
stop_it current

# routing with use: matrix: no max_loaded (memory decides), the sets said
printf 'models:\n  a:\n    cmd: srv --port ${PORT}\nrouting:\n  router:\n    use: matrix\n    settings:\n      matrix:\n        sets:\n          s: "a"\n' >"$T/matrix.yaml"
OUT=$("$VRAM" import llama-swap "$T/matrix.yaml" 2>"$T/matrix.notes")
expect_eq "routing: use: matrix writes no max_loaded" "$?:$(echo "$OUT" | grep -c '^max_loaded')" "0:0"
expect_match "... and says its sets are not carried" "$(cat "$T/matrix.notes")" "matrix: its sets are not carried"
printf 'models:\n  a:\n    cmd: srv --port ${PORT}\ngroups:\n  g:\n    members: [a]\nrouting:\n  router:\n    settings:\n      groups:\n        h:\n          members: [a]\n' >"$T/both.yaml"
expect_match "routing: groups at the top and under routing both: refused as llama-swap refuses it" \
    "$("$VRAM" import llama-swap "$T/both.yaml" 2>&1; echo "exit $?")" "routing.router both"
expect_eq "... exit 2" "$("$VRAM" import llama-swap "$T/both.yaml" 2>/dev/null; echo $?)" 2

# what cannot be imported: said, with the place in the file
printf 'models:\n  a:\n    cmd: llama-server --port ${PORT} ${env.LS_UNSET_VAR}\n' >"$T/unset.yaml"
OUT=$(env -u LS_UNSET_VAR "$VRAM" import llama-swap "$T/unset.yaml" 2>&1)
expect_eq "an unset \${env.NAME}: refused as llama-swap refuses it (exit 2)" "$? $OUT" \
    "2 vram import: $T/unset.yaml: \${env.LS_UNSET_VAR}: LS_UNSET_VAR is not set (llama-swap refuses the file too): set it, or write its value"
printf 'models:\n  a:\n    cmd: llama-server --port ${PORT} ${nope}\n' >"$T/bad.yaml"
expect_match "an unknown macro: refused with where it is" "$("$VRAM" import llama-swap "$T/bad.yaml" 2>&1)" \
    "models.a.cmd: \\$\{nope\}: no such macro"
printf 'models:\n  a: [\n' >"$T/bad.yaml"
expect_match "not YAML: refused with its line" "$("$VRAM" import llama-swap "$T/bad.yaml" 2>&1)" "not YAML: .* line"
printf 'models:\n  far:\n    cmd: llama-server --port 9000\n    proxy: http://10.0.0.5:9000\n  near:\n    cmd: llama-server --port ${PORT}\n' >"$T/far.yaml"
OUT=$("$VRAM" import llama-swap "$T/far.yaml" 2>"$T/far.notes")
expect_match "a model on another host is left out, said why; the others written" \
    "$(cat "$T/far.notes" | tr '\n' ' ') $(echo "$OUT" | grep '^\[model')" "models.far: left out: its proxy .* another host.*\[model near\]"
# a file another party wrote (issue 42, item 7): a few hundred bytes of
# merge keys, each merging the one before eight times, once took minutes
# of CPU; an ID with a terminal's commands reached the terminal as they are
python3 - "$T/bomb.yaml" <<'PY'
import sys
lines = ["x0: &x0 {a: 1}"]
for i in range(1, 9):
    lines.append("x%d: &x%d {<<: [%s]}" % (i, i, ", ".join(["*x%d" % (i - 1)] * 8)))
lines += ["models:", "  m:", "    <<: [%s]" % ", ".join(["*x8"] * 8), "    cmd: llama-server --port ${PORT}"]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
START=$(date +%s)
OUT=$(timeout 20 "$VRAM" import llama-swap "$T/bomb.yaml" 2>&1 >/dev/null)
RC=$?
expect_eq "merge keys of merge keys ($(wc -c <"$T/bomb.yaml") bytes): refused at once, exit 2" \
    "$RC $(( $(date +%s) - START < 5 ))" "2 1"
expect_match "... saying why" "$OUT" "merge keys \(<<:\) ask for more than .* not read"
printf 'models:\n  "evil\\e[2J\\e]0;owned\\a\\x9b31m":\n    cmd: "llama-server --port ${PORT} \\e[5m"\n    description: "\\e[41mred"\n' >"$T/evil.yaml"
"$VRAM" import llama-swap "$T/evil.yaml" >"$T/evil.out" 2>"$T/evil.err"
expect_eq "a hostile ID: no escape, BEL or C1 control reaches the terminal or the file" \
    "$(cat "$T/evil.out" "$T/evil.err" | od -An -c | grep -cE '033|007|302 233')" 0
expect_match "... and the ID is still named, made safe" "$(cat "$T/evil.err")" 'models\.evil\?\[2J\?\]0;owned\?\?31m: left out'
finish
