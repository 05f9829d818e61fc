#!/bin/sh
# vram status against the simulated machines in examples/: the display tax
# picture, the 8-GPU server, old drivers, and no driver at all.
. "$(dirname "$0")/lib.sh"

J=$("$VRAM" --sim "$WS" status --json)
expect_eq "workstation: one GPU" "$(echo "$J" | jq '.gpus | length')" 1
expect_eq "total is 16 GiB" "$(echo "$J" | jq '.gpus[0].memory.total')" $((16 * GiB))
expect_eq "driver reserve 0.45 GiB" "$(echo "$J" | jq '.gpus[0].breakdown.reserved')" 483183821
expect_eq "desktop 1.6 GiB (Xorg 1.1 + gnome-shell 0.5)" \
    "$(echo "$J" | jq '.gpus[0].breakdown.display')" $((1181116006 + 536870912))
expect_eq "unattributed 0.05 GiB" "$(echo "$J" | jq '.gpus[0].breakdown.unattributed')" 53687091
expect_eq "parts add up to the total" \
    "$(echo "$J" | jq '.gpus[0].breakdown | .reserved+.display+.workloads+.other+.unattributed+.free')" \
    $((16 * GiB))
expect_eq "desktop processes are display/graphics" \
    "$(echo "$J" | jq -c '[.gpus[0].processes[] | [.name, .role, .type]]')" \
    '[["Xorg","display","graphics"],["gnome-shell","display","graphics"]]'
expect_eq "memory api v2" "$(echo "$J" | jq -r '.gpus[0].memory.api')" v2
# the memory view asks no gauge (a first asking of each costs the real
# driver milliseconds): --all does
expect_eq "no gauge or setting without --all: null" \
    "$(echo "$J" | jq -c '.gpus[0] | [.utilization, .power_mw, .temperature_c, .display, .power_limit_mw]')" \
    '[null,null,null,null,null]'
JA=$("$VRAM" --sim "$WS" status --json --all)
expect_eq "--all: the gauges and settings" \
    "$(echo "$JA" | jq -c '.gpus[0] | [.utilization, .power_mw, .temperature_c, .display, .power_limit_mw]')" \
    '[{"gpu":0,"memory":0},24000,38,{"attached":true,"active":true},300000]'
expect_eq "--all: the same memory view" "$(echo "$JA" | jq -c '.gpus[0].breakdown')" \
    "$(echo "$J" | jq -c '.gpus[0].breakdown')"

T1=$("$VRAM" --sim "$WS" status)
expect_match "text: header" "$T1" '^GPU 0  NVIDIA GeForce RTX 5070 Ti   16.0 GiB   used 2.10 GiB   free 13.9 GiB$'
expect_match "text --all: power and display in the header" "$("$VRAM" --sim "$WS" status --all)" \
    '^GPU 0  NVIDIA GeForce RTX 5070 Ti   16.0 GiB   used 2.10 GiB   free 13.9 GiB   24 W   display: active$'
expect_match "text: desktop line names Xorg and gnome-shell" "$T1" \
    'desktop / display +1.60 GiB   Xorg 1.10 GiB, gnome-shell 0.50 GiB'
expect_match "text: reserve" "$T1" 'driver reserved +0.45 GiB'
expect_match "text: unattributed" "$T1" 'unattributed +0.05 GiB'

J=$(VRAM_SIM="$SRV" "$VRAM" status --json)
expect_eq "VRAM_SIM works like --sim: 8 GPUs" "$(echo "$J" | jq '.gpus | length')" 8
expect_eq "server: the training job on GPU 2" "$(echo "$J" | jq '.gpus[2].breakdown.workloads')" $((71 * GiB))
expect_eq "server: GPU 5's hidden 2 GiB is unattributed" \
    "$(echo "$J" | jq '.gpus[5].breakdown.unattributed')" $((2 * GiB))
expect_eq "server: a card without a fan says null" \
    "$(VRAM_SIM="$SRV" "$VRAM" status --json --all | jq -c "[.gpus[0].fan_pct, .gpus[0].power_limit_mw != null]")" "[null,true]"
expect_eq "server: no display anywhere" "$(echo "$J" | jq '[.gpus[].breakdown.display] | add')" 0

expect_eq "energy is not read by default (3 ms a GPU): null" "$(echo "$J" | jq '.gpus[0].energy_mj')" null
E=$("$VRAM" --sim "$WS" status --json --energy | jq '.gpus[0].energy_mj')
[ "$E" -ge 0 ] 2>/dev/null && ok "--energy reads the counter ($E mJ)" || not_ok "--energy reads the counter" "$E"

N=$("$VRAM" --sim "$WS" status --json --watch 0.1 --count 3 | wc -l)
expect_eq "--watch --count 3 prints 3 JSON lines" "$N" 3

# the slow calls (modes, limits, links, fan, maximum clocks, and the
# utilization and power draw: milliseconds each on a real driver's first
# sample, 15 ms for them all on an H100): without --all, vram status asks
# only the driver model of them (Windows' WDDM or TCC), the text and the
# JSON alike; --all asks all 14, the tier on threads at once where the
# driver allows. Each simulated slow call takes 300 ms here, one at a
# time: 4.2 s for all. On a loaded machine a run's own time varies, so
# each is timed against the same run without the delay.
ms_of() { _t0=$(date +%s%N); "$@" >"$T/timed.out"; echo $((($(date +%s%N) - _t0) / 1000000)); }
for form in "" --json; do
    BASE=$(ms_of "$VRAM" --sim "$WS" status $form)
    MS=$(ms_of env VRAM_SIM_NVML_SLOW_MS=300 VRAM_SIM_NVML_SLOW_SERIAL=1 "$VRAM" --sim "$WS" status $form)
    [ $((MS - BASE)) -lt 1200 ] && ok "status $form: 1 of the 14 slow calls ($MS ms, $BASE without)" ||
        not_ok "status $form: 1 of the 14 slow calls" "took $MS ms, $BASE without: 4 or more calls of 300 ms"
done
BASE=$(ms_of "$VRAM" --sim "$WS" status --json --all)
MS=$(ms_of env VRAM_SIM_NVML_SLOW_MS=300 "$VRAM" --sim "$WS" status --json --all)
[ $((MS - BASE)) -lt 2400 ] && ok "--all: the tier's 12 calls at once ($MS ms, $BASE without)" ||
    not_ok "--all: the tier's 12 calls at once" "took $MS ms, $BASE without: 4.2 s more is the calls in turn"
expect_eq "... every field of the tier answered" \
    "$(jq -c '.gpus[0] | [.power_limit_mw, .persistence, .compute_mode, .display, .mig, .pcie, .fan_pct, .max_clocks_mhz, .driver_model]' "$T/timed.out")" \
    '[300000,false,"default",{"attached":true,"active":true},false,{"gen":5,"width":16},30,{"sm":3090,"memory":14001},null]'

# an old driver: no memory v2, no detail list, 32-byte process records
cat >"$T/old.json" <<JSON
{"absent": ["nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetRunningProcessDetailList",
            "nvmlDeviceGetPowerUsage", "nvmlDeviceGetTemperature"],
 "process_record_size": 32,
 "gpus": [{"name": "NVIDIA Old", "memory": "8G", "reserved": "300M",
           "processes": [{"pid": 4194401, "name": "Xorg", "used": "100M"},
                         {"pid": 4194402, "name": "job-a", "type": "compute", "used": "1G"},
                         {"pid": 4194403, "name": "job-b", "type": "compute", "used": "2G"}]}]}
JSON
J=$("$VRAM" --sim "$T/old.json" status --json)
expect_eq "v1 fallback is said" "$(echo "$J" | jq -r '.gpus[0].memory.api')" v1
expect_eq "v1: reserved unknown (null)" "$(echo "$J" | jq '.gpus[0].memory.reserved')" null
expect_eq "v1: reserve lands in unattributed" "$(echo "$J" | jq '.gpus[0].breakdown.unattributed')" $((300 * MiB))
expect_eq "535 layout: every process read right" \
    "$(echo "$J" | jq -c '[.gpus[0].processes[] | [.pid, .used]]')" \
    "[[4194402,$GiB],[4194403,$((2 * GiB))],[4194401,$((100 * MiB))]]"
expect_eq "missing power is null, not 0" \
    "$("$VRAM" --sim "$T/old.json" status --json --all | jq '.gpus[0].power_mw')" null
T1=$("$VRAM" --sim "$T/old.json" status)
expect_match "text says the reserve is unknown" "$T1" 'driver reserved +n/a'

# a Windows machine file (WDDM): the simulated NVML lists the processes
# without their memory, as NVIDIA's does there; Linux's vram says so too
# (printf, not dash's echo: the JSON has Windows paths' backslashes)
WD="$SRC/examples/windows-desktop.json"
J=$("$VRAM" --sim "$WD" status --json)
expect_eq "WDDM: the driver model, and no per-process figure" \
    "$(printf '%s\n' "$J" | jq -c '[.gpus[0].driver_model, ([.gpus[0].processes[] | .used, .used_source] | unique)]')" \
    '["wddm",[null]]'
expect_eq "WDDM: the desktop's processes by name" \
    "$(printf '%s\n' "$J" | jq -c '[.gpus[0].processes[] | select(.role == "display") | .name] | sort')" \
    '["NVDisplay.Container.exe","SearchHost.exe","dwm.exe","explorer.exe","msedge.exe"]'
T1=$("$VRAM" --sim "$WD" status)
expect_match "WDDM: says the figures are hidden" "$T1" "note: WDDM hides 5 processes' memory"

# the CUDA version, kept in the user's cache for the driver it belongs to:
# text status asks nothing of libcuda (and writes no cache), --json reads
# it once, then from the cache while the driver stays the same
# (in a folder of this user's: $T is open to all, sticky, for the models
# root's daemon runs as vram-model, and no cache is made in such a folder)
mkdir -m 700 "$T/home"
export XDG_CACHE_HOME="$T/home/cache2"
"$VRAM" --sim "$WS" status >/dev/null
[ -e "$XDG_CACHE_HOME/vram/cuda-version" ] && not_ok "text status: no CUDA version read, none cached" ||
    ok "text status: no CUDA version read, none cached"
"$VRAM" --sim "$WS" status --json >/dev/null
expect_eq "--json: the CUDA version cached with its driver's" "$(cat "$XDG_CACHE_HOME/vram/cuda-version")" \
    "580.95.05 13000"
expect_eq "... in a file and folders of this user's only, made where missing" \
    "$(stat -c %a "$XDG_CACHE_HOME" "$XDG_CACHE_HOME/vram" "$XDG_CACHE_HOME/vram/cuda-version" | paste -sd' ')" \
    "700 700 600"
echo "580.95.05 12070" >"$XDG_CACHE_HOME/vram/cuda-version"
expect_eq "the cache is what --json says, for the same driver" \
    "$("$VRAM" --sim "$WS" status --json | jq .driver.cuda_version)" 12070
echo "575.51.03 12090" >"$XDG_CACHE_HOME/vram/cuda-version"
expect_eq "another driver's cache: asked again" \
    "$("$VRAM" --sim "$WS" status --json | jq .driver.cuda_version)" 13000
expect_eq "... and cached anew" "$(cat "$XDG_CACHE_HOME/vram/cuda-version")" "580.95.05 13000"
# the max clocks too (5 ms of a first sample on an H100; --all shows them),
# per GPU, for the driver they were read under
U0=$("$VRAM" --sim "$WS" status --json --all | jq -r '.gpus[0].uuid')
expect_eq "--json: each GPU's max clocks cached under its UUID and driver" \
    "$(cat "$XDG_CACHE_HOME/vram/max-clocks")" "580.95.05 $U0 3090 14001"
echo "580.95.05 $U0 2100 9001" >"$XDG_CACHE_HOME/vram/max-clocks"
expect_eq "the cache is what --json says, for that GPU and driver" \
    "$("$VRAM" --sim "$WS" status --json --all | jq -c '.gpus[0].max_clocks_mhz')" '{"sm":2100,"memory":9001}'
echo "575.51.03 $U0 2100 9001" >"$XDG_CACHE_HOME/vram/max-clocks"
expect_eq "another driver's: asked again" \
    "$("$VRAM" --sim "$WS" status --json --all | jq -c '.gpus[0].max_clocks_mhz')" '{"sm":3090,"memory":14001}'
printf 'junk\n580.95.05 GPU-other 1 1\n' >"$XDG_CACHE_HOME/vram/max-clocks"
expect_eq "lines that do not parse or name another GPU: asked again" \
    "$("$VRAM" --sim "$WS" status --json --all | jq -c '.gpus[0].max_clocks_mhz')" '{"sm":3090,"memory":14001}'
expect_eq "... and cached anew" "$(cat "$XDG_CACHE_HOME/vram/max-clocks")" "580.95.05 $U0 3090 14001"
if [ "$(id -u)" -eq 0 ]; then
    echo "580.95.05 12070" >"$XDG_CACHE_HOME/vram/cuda-version"
    chown 65534 "$XDG_CACHE_HOME/vram"
    expect_eq "a cache folder of another user's is not believed" \
        "$("$VRAM" --sim "$WS" status --json | jq .driver.cuda_version)" 13000
fi

# no driver at all
OUT=$(env -u VRAM_SIM LD_LIBRARY_PATH=/nonexistent "$VRAM" status 2>&1)
RC=$?
expect_eq "no driver: exit 3" "$RC" 3
expect_match "no driver: names the library and --sim" "$OUT" 'libnvidia-ml.so.1.*--sim'

finish
