#!/bin/sh
# Fast swap of stream-ordered pools and CUDA graphs against the simulated
# driver: memory from cuMemAllocAsync (the default pool, a pool of the
# program's own) moves out and back intact, and the pools' bookkeeping is
# right after (frees, reuse of what was freed, trims, the release
# threshold); a graph captured before a suspend, with an allocation node
# inside, replays after the resume at the same addresses with the same
# result; a graph allocation still live sends the process to the driver's
# checkpoint, saying why.
. "$(dirname "$0")/lib.sh"
: "${POOLMODEL:?}"
export VRAM_SIM="$SRC/tests/fixtures/machines/two-16g.json"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"

run() { OUT=$("$@" 2>&1); RC=$?; return $RC; }
pid_used() { "$VRAM" status --json | jq "[.gpus[].processes[] | select(.pid == $1) | .used] | add // 0"; }

# pm NAME [VRAM_RUN_ARGS...]: poolmodel under vram run, its commands on fd
# 3 (NAME's fifo), its answers in $T/NAME.out; PM its pid
pm() {
    name=$1
    shift
    mkfifo "$T/$name.in"
    "$VRAM" run --quiet "$@" -- "$POOLMODEL" <"$T/$name.in" >"$T/$name.out" 2>"$T/$name.err" &
    JOBS="$JOBS $!"
    exec 3>"$T/$name.in"
    PMOUT="$T/$name.out"
    wait_for 20 grep -q '^ready' "$PMOUT"
    PM=$(sed -n 's/^ready //p' "$PMOUT")
    JOBS="$JOBS $PM"
}
lines() { wc -l <"$PMOUT"; }
answered() { [ "$(lines)" -gt "$_n" ]; }
# ask COMMAND...: its answer (waits for it: a loaded machine under the
# sanitizers can take long)
ask() {
    _n=$(lines)
    echo "$*" >&3
    wait_for 90 answered || { echo "no answer to: $*"; return; }
    sed -n "$((_n + 1))p" "$PMOUT"
}
addr() { ask "$@" | sed -n 's/^addr [^ ]* //p'; }
stat_of() { ask stats "$1" | sed -n "s/.* $2 \([0-9]*\).*/\1/p"; }

# 1. memory from both kinds of pool, some freed on a stream and not yet
#    known done, moved out and back
pm p --swap --gpu 0
A=$(addr alloc a 16M default 1)
ask fill a 1 >/dev/null
B=$(addr alloc b 3M default 2)
ask fill b 2 >/dev/null
expect_eq "pools: a program-made pool, keeping what is freed" "$(ask mkpool) $(ask threshold user 1G)" "ok ok"
U=$(addr alloc u 12M user 1)
ask fill u 3 >/dev/null
F=$(addr alloc f 4M user 2)
ask free f 2 >/dev/null
[ -n "$A" ] && [ -n "$B" ] && [ -n "$U" ] && [ -n "$F" ] && ok "pools: allocations made" ||
    not_ok "pools: allocations made" "$(cat "$PMOUT" "$T/p.err")"
RES_U=$(stat_of user reserved)
USED_U=$(stat_of user used)
BEFORE=$(pid_used "$PM")
run "$VRAM" suspend "$PM"
expect_eq "pools: vram suspend succeeds" "$RC" 0
expect_match "pools: by fast swap" "$OUT" "suspended pid $PM \(fast path\)"
# a (16 MiB), b's chunk (20 MiB), u (12 MiB); f's chunk has nothing in it
expect_match "pools: a chunk nothing is allocated from moves no bytes" "$OUT" "fast swap: 3 allocations, 48.0 MiB moved out"
expect_eq "pools: NVML shows only the context left on the GPU" "$(pid_used "$PM")" $((300 * MiB))
run "$VRAM" resume "$PM"
expect_match "pools: back by fast swap" "$OUT" "resumed pid $PM on GPU 0 \(fast path\)"
expect_eq "pools: the GPU memory is back" "$(pid_used "$PM")" "$BEFORE"
expect_eq "pools: default pool memory intact" "$(ask check a 1) $(ask check b 2)" "ok ok"
expect_eq "pools: a program-made pool's memory intact" "$(ask check u 3)" ok

# 2. the pools' bookkeeping after the swap
expect_eq "bookkeeping: what the pool reserved and handed out is as before" \
    "$(stat_of user reserved) $(stat_of user used)" "$RES_U $USED_U"
expect_eq "bookkeeping: what was freed on a stream is reused on it, at its address" \
    "$(addr alloc g 4M user 2)" "$F"
ask free u 1 >/dev/null
ask free g 2 >/dev/null
ask sync >/dev/null
expect_eq "bookkeeping: a trim gives the program's pool back" "$(ask trim user 0) $(stat_of user reserved)" "ok 0"
expect_eq "bookkeeping: and NVML sees it go" "$(pid_used "$PM")" $((BEFORE - RES_U))
BEFORE=$(pid_used "$PM")
ask free b 2 >/dev/null
ask ssync 2 >/dev/null
D=$((BEFORE - $(pid_used "$PM")))
[ "$D" -gt 0 ] && ok "bookkeeping: a synchronize gives back what passes the release threshold (0)" ||
    not_ok "bookkeeping: a synchronize gives back what passes the release threshold (0)" "NVML $D"
ask threshold default 1G >/dev/null
ask alloc c 3M default 2 >/dev/null
X=$(pid_used "$PM")
ask free c 2 >/dev/null
ask ssync 2 >/dev/null
expect_eq "bookkeeping: under a 1 GiB threshold it keeps it" "$(pid_used "$PM")" "$X"
C=$(addr alloc c 3M default 1)
ask fill c 4 >/dev/null

# 3. again: swapped twice more, intact, and still allocating
FAILS=""
for i in 1 2; do
    run "$VRAM" suspend "$PM" && run "$VRAM" resume "$PM" || FAILS="$FAILS $OUT"
    expect_match "again: round trip $i by fast swap" "$OUT" "fast path"
done
expect_eq "again: round trips" "$FAILS" ""
expect_eq "again: memory intact" "$(ask check a 1) $(ask check c 4)" "ok ok"
ask alloc h 24M user 1 >/dev/null
expect_eq "again: the program's pool grows again" "$(ask fill h 5) $(ask check h 5)" "ok ok"
exec 3>&-

# 4. a graph captured before the suspend, with an allocation node inside:
#    same result, same addresses, after the resume
pm g --swap --gpu 0
ask alloc w 8M default 0 >/dev/null
ask fill w 6 >/dev/null
OUTP=$(addr legacy out 8M)
ask capture >/dev/null
TMP=$(addr alloc t 8M default 1)
ask copy t w 1 >/dev/null
# as PyTorch's backend:cudaMallocAsync allocates (no pool named): the
# driver loses a capture on any call it forbids there (cuStreamGetDevice)
TMP2=$(addr aalloc u 8M 1)
expect_match "graph: an allocation node of cudaMallocAsync's kind" "$TMP2" '^0x'
ask copy u t 1 >/dev/null
ask copy out u 1 >/dev/null
ask free u 1 >/dev/null
ask free t 1 >/dev/null
expect_eq "graph: captured" "$(ask endcapture)" ok
expect_eq "graph: it runs" "$(ask launch) $(ask check out 6)" "ok ok"
expect_match "graph: its memory stays cached for the next launch" "$(ask gmem)" "gmem used 0 reserved [1-9]"
run "$VRAM" suspend "$PM"
expect_match "graph: suspended by fast swap" "$OUT" "suspended pid $PM \(fast path\)"
expect_eq "graph: its cached memory left the GPU too" "$(pid_used "$PM")" $((300 * MiB))
run "$VRAM" resume "$PM"
expect_match "graph: resumed by fast swap" "$OUT" "fast path"
ask memset out 0 0 >/dev/null
ask sync >/dev/null
expect_match "graph: the output cleared" "$(ask check out 6)" CORRUPT
expect_eq "graph: replayed after the resume, same result" "$(ask launch) $(ask check out 6)" "ok ok"
exec 3>&-

# 5. an allocation a graph made and nobody freed: the driver's checkpoint
pm k --swap --gpu 0
ask capture >/dev/null
ask alloc keep 4M default 1 >/dev/null
ask memset keep 7 1 >/dev/null
ask endcapture >/dev/null
ask launch >/dev/null
run "$VRAM" suspend "$PM"
expect_match "live graph memory: the driver's checkpoint" "$OUT" '\(driver path\)'
expect_match "live graph memory: and why" "$OUT" 'a CUDA graph allocated and has not freed'
"$VRAM" resume "$PM" >/dev/null 2>&1
exec 3>&-

finish
