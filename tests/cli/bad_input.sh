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

# every refused value is said the same way: the option, the value, the fix
run "$VRAM" suspend 4242 --timeout soon
expect_eq "suspend --timeout soon: exit 2" "$RC" 2
expect_match "suspend --timeout soon: the option, the value and the fix" "$OUT" "^vram suspend: --timeout 'soon': seconds from 0 to 3600"
run "$VRAM" resume 4242 --gpu first
expect_match "resume --gpu first: the option, the value and the fix" "$OUT" "^vram resume: --gpu 'first': a GPU index"
run "$VRAM" import llama-swap "$T/none.yaml" --vram 0
expect_match "import --vram 0: the option, the value and the fix" "$OUT" "^vram import: --vram '0': a size, like 8G"
run "$VRAM" load qwen --timeout never
expect_match "load --timeout never: the option, the value and the fix" "$OUT" "^vram load: --timeout 'never': a duration"
# an option a command does not have is getopt's to name, never refused as a bad value
run "$VRAM" unload qwen --timeout 5
expect_eq "unload --timeout: exit 2" "$RC" 2
expect_match "unload has no --timeout" "$OUT" "^vram unload: unrecognized option '--timeout'"
# the usage line names only options the command has (vram complete
# options lists those its table entry declares)
for c in $("$VRAM" complete commands); do
    usage=$("$VRAM" "$c" --help | head -1)
    opts=" $("$VRAM" complete options "$c" | tr '\n' ' ')"
    bad=""
    for o in $(printf '%s\n' "$usage" | grep -oE -- '--[a-z][a-z-]*'); do
        case "$opts" in *" $o "*) ;; *) bad="$bad $o" ;; esac
    done
    expect_eq "vram $c: its usage line names only its options" "$bad" ""
done

finish
