#!/bin/bash
# A slice on each of several GPUs (issue 21) on the simulated 8-GPU server:
# libvramcap caps every device of a process on its own (VRAM_CAP, and
# VRAM_CAP_GROUP's one group per GPU), charges and gives back on the
# allocation's own device whatever context is current, answers each
# device's memory queries with that device's slice and refuses a device it
# was not given; `vram run
# --gpus` takes all its GPUs or none, never leaving a slice behind, and two
# runs deciding at once never both get the same memory; a `gpus = 2` model
# of vram serve is capped on each of its GPUs.
. "$(dirname "$0")/lib.sh"
: "${SHIM:?}" "${TESTMODEL:?}"
export VRAM_SIM="$SRV"
export LD_LIBRARY_PATH="$(dirname "$VRAM")/sim"

run() { OUT=$("$@" 2>&1); RC=$?; }
uuid() { "$VRAM" status --json | jq -r ".gpus[$1].uuid"; }
# field DEV NAME: what simalloc's "dev DEV free F total T ..." line says of NAME
field() { printf '%s\n' "$OUT" | sed -n "s/^dev $1 .*\\b$2 \\([0-9]*\\).*/\\1/p"; }
slices() { find "$T" -maxdepth 1 -name 'vram-group-*' | wc -l; }

# 1. libvramcap alone: VRAM_CAP=SIZE is each device's own budget
OUT=$(LD_PRELOAD="$SHIM" VRAM_CAP=4G CUDA_VISIBLE_DEVICES=0,1 \
    "$SIMALLOC" --devices 2 --bytes 3G --then 1G </dev/null 2>&1)
expect_eq "VRAM_CAP=4G: 3 GiB on device 0 and 3 GiB on device 1" \
    "$(printf '%s\n' "$OUT" | grep -c '^dev [01] ok$')" 2
expect_eq "and 1 GiB more is refused on each" \
    "$(printf '%s\n' "$OUT" | grep -c '^dev [01] then oom 2$')" 2
expect_eq "each device says it has 4 GiB (cuMemGetInfo, cuDeviceTotalMem, NVML)" \
    "$(field 0 total) $(field 0 devtotal) $(field 0 nvml) $(field 1 total) $(field 1 devtotal) $(field 1 nvml)" \
    "$((4 * GiB)) $((4 * GiB)) $((4 * GiB)) $((4 * GiB)) $((4 * GiB)) $((4 * GiB))"
OUT=$(LD_PRELOAD="$SHIM" VRAM_CAP=4G,2G CUDA_VISIBLE_DEVICES=0,1,2 \
    "$SIMALLOC" --devices 3 --bytes 1G --then 1G </dev/null 2>&1)
expect_eq "VRAM_CAP=4G,2G: a size per device" "$(field 0 total) $(field 1 total)" \
    "$((4 * GiB)) $((2 * GiB))"
expect_match "the 4 GiB device takes 1 GiB more" "$OUT" "^dev 0 then ok$"
expect_match "the 2 GiB one does not" "$OUT" "^dev 1 then oom 2$"
expect_match "a device with no size of its own gets nothing" "$OUT" "^dev 2 setup 2$"
expect_match "and says why" "$OUT" "CUDA device 2 \(GPU-[0-9a-f-]*\) has no size in VRAM_CAP"

# 2. vram run --gpus 0,1 --vram 4G: 4 GiB on each GPU, not 4 GiB in all
run "$VRAM" run --gpus 0,1 --vram 4G -- "$SIMALLOC" --devices 2 --bytes 3G --then 1G
expect_eq "--gpus 0,1 --vram 4G: exit 0" "$RC" 0
expect_eq "3 GiB taken on GPU 0 and on GPU 1" "$(printf '%s\n' "$OUT" | grep -c '^dev [01] ok$')" 2
expect_eq "a 4th GiB refused on either" \
    "$(printf '%s\n' "$OUT" | grep -c '^dev [01] then oom 2$')" 2
expect_eq "cuMemGetInfo and NVML say 4 GiB on each" \
    "$(field 0 total) $(field 0 nvml) $(field 1 total) $(field 1 nvml)" \
    "$((4 * GiB)) $((4 * GiB)) $((4 * GiB)) $((4 * GiB))"
expect_eq "and the same free on each (one budget per GPU)" "$(field 0 free)" "$(field 1 free)"
expect_match "the report gives each GPU's peak of its slice" "$OUT" \
    "on GPUs 0,1; peak VRAM 3.[0-9]+ GiB of 4.00 GiB on GPU 0, 3.[0-9]+ GiB of 4.00 GiB on GPU 1"
expect_eq "no slice left once it is done" "$(slices)" 0

run "$VRAM" run --gpus 0,1 --vram 0:4G,1:2G -- "$SIMALLOC" --devices 2 --bytes 1G --then 1G
expect_eq "--vram 0:4G,1:2G: 4 GiB on GPU 0, 2 GiB on GPU 1" "$(field 0 total) $(field 1 total)" \
    "$((4 * GiB)) $((2 * GiB))"
expect_match "GPU 0 takes a second GiB" "$OUT" "^dev 0 then ok$"
expect_match "GPU 1 does not" "$OUT" "^dev 1 then oom 2$"
# cuMemCreate charges the device its properties name, not the current one
run "$VRAM" run --gpus 0,1 --vram 0:4G,1:2G -- "$SIMALLOC" --devices 2 --vmm --bytes 1200M --then 1200M
expect_match "cuMemCreate on GPU 1 from GPU 0's context: GPU 0 still has room" "$OUT" "^dev 0 then ok$"
expect_match "and GPU 1 is full" "$OUT" "^dev 1 then oom 2$"
# a free gives back to the GPU it was taken on, whatever context is current
run "$VRAM" run --gpus 0,1 --vram 2G -- "$SIMALLOC" --devices 2 --bytes 1G --refree 400M
expect_match "freed from GPU 0's context, GPU 1's 400 MiB can be taken again" "$OUT" \
    "^dev 1 refree ok$"
run "$VRAM" run --gpus 3,5 -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"'
expect_match "the command sees the GPUs in the order given, by UUID" "$OUT" \
    "^$(uuid 3),$(uuid 5)$"

# a process given GPUs 0 and 1 cannot allocate on a third
run "$VRAM" run --quiet --gpus 0,1 --vram 4G -- env CUDA_VISIBLE_DEVICES="$(uuid 0),$(uuid 1),$(uuid 2)" \
    "$SIMALLOC" --devices 3 --bytes 1G
expect_match "GPUs 0 and 1 take their GiB" "$OUT" "^dev 1 ok$"
expect_match "a GPU it was not given is refused" "$OUT" "^dev 2 setup 2$"
expect_match "and libvramcap says why, once" "$OUT" \
    "libvramcap: CUDA device 2 \($(uuid 2)\) is not one of the 2 GPUs this process was given"

# each GPU's slice in vram status, beside the process on that GPU
"$VRAM" run --quiet --gpus 0,1 --vram 0:4G,1:2G -- "$SIMALLOC" --devices 2 --bytes 1G --hold \
    >"$T/held.out" 2>&1 </dev/null &
HELD=$!
JOBS="$JOBS $HELD"
wait_ready "$T/held.out"
P=$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/held.out")
J=$("$VRAM" status --json)
expect_eq "status: the process's slice on each of its GPUs" \
    "$(echo "$J" | jq -c "[.gpus[0,1].processes[] | select(.pid == $P) | .cap]")" \
    "[$((4 * GiB)),$((2 * GiB))]"
kill "$P" 2>/dev/null
wait $HELD 2>/dev/null

# 3. bad input: exit 2, naming what is wrong
run "$VRAM" run --gpus 0,1 --vram 0:4G,2:2G -- true
expect_eq "--vram for other GPUs than --gpus: exit 2" "$RC" 2
expect_match "naming both" "$OUT" "--vram names GPUs 0,2 and --gpus names GPUs 0,1"
run "$VRAM" run --gpus 2 --vram 0:4G,1:2G -- true
expect_eq "sizes per GPU with --gpus N: exit 2" "$RC" 2
run "$VRAM" run --vram 4G,2G -- true
expect_eq "sizes by position: exit 2" "$RC" 2
run "$VRAM" run --gpu 0 --gpus 0,1 -- true
expect_eq "--gpu and --gpus: exit 2" "$RC" 2
run "$VRAM" run --gpus 0,0 -- true
expect_match "a GPU named twice: exit 2, saying so" "$RC $OUT" "^2 .*names GPU 0 twice"
run "$VRAM" run --gpus 0,9 -- true
expect_match "a GPU that does not exist: exit 2" "$RC $OUT" "^2 .*'9': no such GPU"
run "$VRAM" run --gpus 9 -- true
expect_eq "more GPUs than the machine has: exit 2" "$RC" 2
run "$VRAM" run --gpus 0,x, -- true
expect_eq "an empty name: exit 2" "$RC" 2

# 4. all or none: GPU 1 has no room, so a run over 0 and 1 gets neither
"$VRAM" run --quiet --gpu 1 --vram 130G -- "$SIMALLOC" --hold >"$T/big.out" 2>&1 </dev/null &
BIG=$!
JOBS="$JOBS $BIG"
wait_ready "$T/big.out"
run "$VRAM" run --gpus 0,1 --vram 20G -- true
expect_eq "a run whose second GPU has no room: refused (exit 1)" "$RC" 1
expect_match "naming that GPU and its room" "$OUT" "no room on GPU 1 of --gpus 0,1: .* for its 20.0 GiB slice"
expect_eq "and no slice left on the first (only the big job's is there)" "$(slices)" 1
run "$VRAM" run --gpus 2 --vram 20G -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"'
expect_eq "--gpus 2: two GPUs with room, which GPU 1 is not" \
    "$(printf '%s\n' "$OUT" | grep '^GPU-' | tr ',' '\n' | grep -v "^$(uuid 1)$" | sort -u | wc -l)" 2
run "$VRAM" run --gpus 0,1 --vram 20G --wait --timeout 1s -- true
expect_match "waiting for all of them times out" "$RC $OUT" "^1 .*timed out waiting for room on GPU 1"
expect_eq "leaving nothing either" "$(slices)" 1
kill "$(sed -n 's/^ready \([0-9]*\).*/\1/p' "$T/big.out")" 2>/dev/null
wait $BIG 2>/dev/null

# 5. two runs over the same GPUs deciding at once: never both admitted
#    (80 GiB on each of two 140 GiB GPUs: room for one of them)
both=0
for round in 1 2 3 4 5; do
    for j in a b; do
        "$VRAM" run --quiet --gpus 0,1 --vram 80G -- sh -c 'echo admitted; sleep 0.5' \
            >"$T/race-$j.out" 2>&1 &
        eval "R_$j=\$!"
    done
    wait "$R_a" "$R_b"
    [ "$(cat "$T/race-a.out" "$T/race-b.out" | grep -c '^admitted$')" -le 1 ] || both=$((both + 1))
done
expect_eq "two runs at once never both get 80 GiB of the same 140 GiB GPUs (5 rounds)" "$both" 0
expect_eq "and leave no slice behind" "$(slices)" 0

# 6. vram serve: a model over 2 GPUs is capped on each with its share
cp "$TESTMODEL" "$T/testmodel-gpus"
export VRAM_SOCKET="$T/vram.sock"
PORTS=$((10000 + ($$ * 23) % 20000))
cat >"$T/vram.conf" <<CONF
[serve]
socket = $T/vram.sock
state = $T/vram.db
logs = $T/logs
port_base = $PORTS
min_resident = 0

[model capped]
command = sh -c '"$SIMALLOC" --devices 2 --bytes 1G --then 1G >"$T/capped.out" 2>&1 </dev/null;
  exec "$T/testmodel-gpus" --bytes 64M --all-gpus'
vram = 2G
gpus = 2
cap = yes
swap = driver
CONF
"$VRAM" serve --config "$T/vram.conf" >"$T/serve.log" 2>&1 &
DAEMON=$!
JOBS="$JOBS $DAEMON"
trap 'kill -TERM $DAEMON 2>/dev/null; sleep 0.3; pkill -9 -f "$T/testmodel-gpus" 2>/dev/null; cleanup' EXIT
if wait_for 10 "$VRAM" ps >/dev/null 2>&1; then
    run "$VRAM" load capped --timeout 30s
    expect_match "a capped model over 2 GPUs loads" "$OUT" "^capped: ready"
    [ "$RC" = 0 ] || echo "# $(tail -5 "$T"/logs/* 2>&1)"
    OUT=$(cat "$T/capped.out")
    expect_eq "its process sees its 2 GiB share on each GPU" "$(field 0 total) $(field 1 total)" \
        "$((2 * GiB)) $((2 * GiB))"
    expect_eq "takes 1 GiB on each" "$(printf '%s\n' "$OUT" | grep -c '^dev [01] ok$')" 2
    expect_eq "and is refused a second GiB on each" \
        "$(printf '%s\n' "$OUT" | grep -c '^dev [01] then oom 2$')" 2
else
    not_ok "the daemon starts" "$(cat "$T/serve.log")"
fi
kill -TERM "$DAEMON"
wait_for 15 sh -c "! kill -0 $DAEMON 2>/dev/null"
finish
