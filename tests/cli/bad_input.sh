#!/bin/sh
# Bad input is refused with a message that names the thing, exit 2, and
# nothing runs.
. "$(dirname "$0")/lib.sh"

run() { OUT=$("$@" 2>&1); RC=$?; }

printf '{\n  "gpus": [\n    {"name": "x", "memory": "16G",}\n  ]\n}\n' >"$T/syntax.json"
run "$VRAM" --sim "$T/syntax.json" status
expect_eq "malformed machine file: exit 2" "$RC" 2
expect_match "malformed machine file: file, line and column" "$OUT" "syntax.json:3:[0-9]+: "

printf '{"gpus": [{"name": "x", "memory": "sixteen"}]}' >"$T/sem.json"
run "$VRAM" --sim "$T/sem.json" status
expect_eq "bad size in machine file: exit 2" "$RC" 2
expect_match "bad size: names the field and the fix" "$OUT" 'gpus\[0\]\.memory: not a size.*16G'

run "$VRAM" --sim "$T/none.json" status
expect_eq "missing machine file: exit 2" "$RC" 2
expect_match "missing machine file: says so" "$OUT" 'none.json: No such file'

run env VRAM_SIM="$T/sem.json" "$VRAM" status
expect_eq "VRAM_SIM with a bad file: exit 2" "$RC" 2

for w in abc 0 -1 0.01 100000 "" 2x; do
    run "$VRAM" --sim "$WS" status --watch "$w"
    expect_eq "--watch '$w' refused with exit 2" "$RC" 2
    expect_match "--watch '$w': says what to give" "$OUT" "--watch '$w': give seconds"
done
run "$VRAM" --sim "$WS" status --count 2
expect_match "--count without --watch" "$OUT" 'needs --watch'
run "$VRAM" --sim "$WS" status --bogus
expect_eq "unknown option: exit 2" "$RC" 2
expect_match "unknown option: points to --help" "$OUT" 'vram status --help'
expect_match "unknown option: getopt's message names the command as typed" "$OUT" \
    "^vram status: unrecognized option '--bogus'"
run "$VRAM" reclaim --grace
expect_match "a missing argument: named as vram reclaim" "$OUT" "^vram reclaim: option '--grace' requires an argument"
run "$VRAM" frobnicate
expect_eq "unknown command: exit 2" "$RC" 2
expect_match "unknown command: lists the commands" "$OUT" 'status +where every byte'
run "$VRAM" --sim "$WS" top --interval 0
expect_eq "top --interval 0 refused" "$RC" 2
run "$VRAM" --sim "$WS" top
expect_match "top without a terminal says what to use" "$OUT" 'needs a terminal.*status --watch'

run "$VRAM" status --help
expect_eq "--help exits 0" "$RC" 0
expect_match "--help explains the parts" "$OUT" 'unattributed \(used by no process you can see'

finish
