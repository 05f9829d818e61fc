#!/bin/sh
# The systemd units (systemd/*.in, as meson made them): systemd-analyze
# verify finds nothing to say about either (pointed at this build's vram),
# and they keep what the daemon needs: notify, SIGHUP to reload, a
# delegated cgroup, a stop that reaches every model, no hardening that
# breaks GPU programs.
. "$(dirname "$0")/lib.sh"
: "${SYSTEM_UNIT:?}" "${USER_UNIT:?}"
command -v systemd-analyze >/dev/null || { not_ok "systemd-analyze is installed"; finish; exit 1; }
mkdir -p "$T/system" "$T/user" "$T/run"
chmod 700 "$T/run"
here() { sed "s|^ExecStart=[^ ]*/vram |ExecStart=$VRAM |" "$1"; }
here "$SYSTEM_UNIT" >"$T/system/vram.service"
here "$USER_UNIT" >"$T/user/vram.service"
run() { OUT=$("$@" 2>&1); RC=$?; }

run systemd-analyze verify --man=no "$T/system/vram.service"
expect_eq "verify: the system unit, nothing to say" "$RC:$OUT" "0:"
run env XDG_RUNTIME_DIR="$T/run" systemd-analyze verify --user --man=no "$T/user/vram.service"
expect_eq "verify: the user unit, nothing to say" "$RC:$OUT" "0:"
sed 's/^KillMode=mixed/KillMode=sometimes/' "$T/system/vram.service" >"$T/system/broken.service"
run systemd-analyze verify --man=no "$T/system/broken.service"
expect_match "(verify does object to a broken unit)" "$OUT" "KillMode|kill mode"

for u in "$SYSTEM_UNIT" "$USER_UNIT"; do
    n=$(basename "$u")
    for line in Type=notify 'ExecReload=/bin/kill -HUP $MAINPID' Delegate=yes KillMode=mixed; do
        expect_eq "$n: $line" "$(grep -cxF "$line" "$u")" 1
    done
    expect_match "$n: ExecStart is vram serve" "$(grep ^ExecStart= "$u")" "^ExecStart=/.*/vram serve"
    expect_eq "$n: nothing that breaks CUDA or hides the GPUs" \
        "$(grep -cE '^(MemoryDenyWriteExecute|PrivateDevices|DevicePolicy|ProtectControlGroups|ProtectClock)=' "$u")" 0
done
expect_eq "system unit: ProtectSystem=full, no stricter" "$(grep ^ProtectSystem= "$SYSTEM_UNIT")" "ProtectSystem=full"
expect_eq "system unit: the socket's folder" "$(grep ^RuntimeDirectory= "$SYSTEM_UNIT")" "RuntimeDirectory=vram"
expect_eq "system unit: reads /etc/vram/vram.conf" \
    "$(grep -c '^ExecStart=.* serve --config /etc/vram/vram.conf$' "$SYSTEM_UNIT")" 1
expect_eq "user unit: no --config (the XDG place)" "$(grep -c -- --config "$USER_UNIT")" 0
finish
