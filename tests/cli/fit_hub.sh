#!/bin/sh
# vram fit ORG/REPO[:QUANT] --online (issue 44, item 9): a model of the
# Hugging Face hub read before it is downloaded, against a stand-in hub
# (tests/helpers/hubserver.py, HF_ENDPOINT) that serves repositories
# written here as the hub lists and serves them (its CDN's redirect, range
# requests): only the file list and the headers are fetched, kept in the
# cache (a second look fetches the list only; without the network, the
# list kept is used); the quantization by its tag, Q4_K_M by default; a
# safetensors repository by its config.json, index and shards' headers; a
# gated one with HF_TOKEN; nothing online without --online.
. "$(dirname "$0")/lib.sh"
: "${MKMODEL:?}"
command -v python3 >/dev/null || { echo "fit_hub: needs python3"; exit 77; }
export VRAM_SIM="$WS"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"
export XDG_CACHE_HOME="$T/cache" HOME="$T/home"
unset HF_TOKEN OLLAMA_MODELS HF_HOME HF_HUB_CACHE
run() { OUT=$("$@" 2>&1); RC=$?; }

H="$T/hub"
mkdir -p "$H/bartowski/Tiny-GGUF/Q8_0" "$H/org/Tiny-ST" "$H/org/gated-GGUF" "$HOME"
"$MKMODEL" gguf "$H/bartowski/Tiny-GGUF/Tiny-Q4_K_M.gguf" 0.2
"$MKMODEL" gguf "$H/bartowski/Tiny-GGUF/Q8_0/Tiny-Q8_0.gguf" 0.4
echo '# Tiny' >"$H/bartowski/Tiny-GGUF/README.md"
"$MKMODEL" shards "$H/org/Tiny-ST" 3
cp "$H/bartowski/Tiny-GGUF/Tiny-Q4_K_M.gguf" "$H/org/gated-GGUF/gated-Q4_K_M.gguf"
LOG="$T/hub.log"
python3 "$SRC/tests/helpers/hubserver.py" "$H" "$LOG" "$T/port" &
HUB=$!
JOBS="$JOBS $HUB"
wait_for 10 test -s "$T/port" || { not_ok "the stand-in hub starts"; finish; exit 1; }
export HF_ENDPOINT="http://127.0.0.1:$(cat "$T/port")"
touch "$LOG"

run "$VRAM" fit --vram 8G bartowski/Tiny-GGUF
expect_eq "without --online: exit 2" "$RC" 2
expect_match "... and says that --online reads it from the hub" "$OUT" \
    "bartowski/Tiny-GGUF: no such file .*vram fit --online reads a model of the Hugging Face hub"
expect_eq "... nothing asked of the network" "$(wc -l <"$LOG")" 0

run "$VRAM" fit --online --vram 8G bartowski/Tiny-GGUF
expect_eq "--online: exit 0" "$RC" 0
expect_match "the hub's Q4_K_M by default, its download's size" "$OUT" \
    '^bartowski/Tiny-GGUF:Q4_K_M \(llama, 0.51 B params, stored q4_k, the hub, 0.33 GiB to download\)'
expect_match "... and the answer is that file" "$OUT" 'best that fits: Q4_K_M \(as stored\), the file named'
expect_eq "the list, then the GGUF by range requests after the CDN's redirect" \
    "$(awk '{print $1, $2 ~ /tree\/main/ ? "tree" : $2 ~ /resolve/ ? "resolve" : $2 ~ /^\/cdn/ ? "cdn" : $2, $3 != "-" ? "range" : "whole"}' "$LOG" | sort -u | tr '\n' '|')" \
    "GET cdn range|GET resolve range|GET tree whole|"
SIZE=$(stat -c %s "$H/bartowski/Tiny-GGUF/Tiny-Q4_K_M.gguf")
FETCHED=$(sed -n 's/.* bytes=\([0-9]*\)-\([0-9]*\) .*/\1 \2/p' "$LOG" | sort -u | awk '{s += $2 - $1 + 1} END {print s}')
expect_eq "only the header: under 2 MiB of its $SIZE bytes" "$([ "$FETCHED" -lt 2097152 ] && echo yes)" yes
C="$XDG_CACHE_HOME/vram/hub/bartowski/Tiny-GGUF/Q4_K_M/Tiny-Q4_K_M.gguf"
expect_eq "kept in the cache as a sparse file of its size, the user's only" \
    "$(stat -c '%s %a' "$C") $([ "$(du -k "$C" | cut -f1)" -lt 4096 ] && echo sparse)" "$SIZE 600 sparse"

: >"$LOG"
run "$VRAM" fit --online --vram 8G bartowski/Tiny-GGUF:Q4_K_M
expect_eq "looked at again: the list only, the header from the cache" "$RC $(cut -d' ' -f2 "$LOG" | sed 's/?.*//' | tr '\n' ' ')" \
    "0 /api/models/bartowski/Tiny-GGUF/tree/main "

run "$VRAM" fit --online --json --vram 8G bartowski/Tiny-GGUF:Q8_0
expect_eq "REPO:Q8_0: the file of that tag, one folder down" \
    "$(echo "$OUT" | jq -c '.models[0] | [.name, .source, .disk > 500000000]')" \
    '["bartowski/Tiny-GGUF:Q8_0","the hub",true]'
run "$VRAM" fit --online --vram 8G bartowski/Tiny-GGUF:Q2_K
expect_match "a tag the repository has not: exit 2, the ones it has named" "$RC $OUT" \
    "^2 .*Q2_K: no such GGUF here: .*bartowski/Tiny-GGUF:Q8_0 \(542.3 MiB\), bartowski/Tiny-GGUF:Q4_K_M \(337.6 MiB\)"
run "$VRAM" fit --online --vram 8G nobody/nothing
expect_match "no such repository: exit 2, said" "$RC $OUT" "^2 .*nobody/nothing on 127.0.0.1:[0-9]*: no such repository"

run "$VRAM" fit --online --json --vram 8G org/Tiny-ST
expect_eq "a safetensors repository: its shards' headers and config.json" \
    "$(echo "$OUT" | jq -c '.models[0] | [.name, .stored, .layers > 0, .params > 0]')" \
    '["org/Tiny-ST","bf16",true,true]'
expect_eq "... config.json and the index whole, the shards by range" \
    "$(grep '/cdn/org/Tiny-ST/' "$LOG" | awk '{n = split($2, p, "/"); print p[n], ($3 == "-" ? "whole" : "range")}' | sort -u | sed 's/-0000[0-9]-of-0000[0-9]//' | uniq | tr '\n' '|')" \
    "config.json whole|model.safetensors range|model.safetensors.index.json whole|"

run "$VRAM" fit --online --vram 8G org/gated-GGUF
expect_match "a gated repository without HF_TOKEN: said how" "$RC $OUT" "^2 .*gated or private: .*set HF_TOKEN"
: >"$LOG"
run env HF_TOKEN=hf_test "$VRAM" fit --online --vram 8G org/gated-GGUF
expect_eq "with HF_TOKEN: read" "$RC" 0
expect_eq "... the token sent to the hub, the CDN's redirect followed" \
    "$(awk '{print $4}' "$LOG" | sort -u | tr '\n' ' ')" "auth "

kill "$HUB"
wait "$HUB" 2>/dev/null
: >"$LOG"
run "$VRAM" fit --online --vram 8G bartowski/Tiny-GGUF
expect_eq "the hub unreachable: the list kept and the headers kept answer" "$RC" 0
expect_match "... said so" "$OUT" "bartowski/Tiny-GGUF:Q4_K_M: offline .*the list of its files kept on"
rm -rf "$XDG_CACHE_HOME"
run "$VRAM" fit --online --vram 8G bartowski/Tiny-GGUF
expect_match "unreachable and nothing kept: exit 1, the reason" "$RC $OUT" "^1 vram fit: .*127.0.0.1.*"
finish
