#!/bin/sh
# vram headless on fake roots (sys/, proc/, etc/ trees): status reads the
# GPUs, monitors and display servers; on writes the plan and keeps what it
# replaces; off puts the tree back byte for byte; dry runs change nothing;
# refusals change nothing.
. "$(dirname "$0")/lib.sh"

run() { OUT=$("$@" 2>&1); RC=$?; }
# every path with its type, mode, link target and content hash
print_tree() {
    (cd "$1" && find . -printf '%p %y %m %l\n' | sort &&
        find . -type f -exec md5sum {} + | sort)
}

# card R NAME VENDOR PCI DRIVER BOOTVGA
card() {
    d="$1/sys/class/drm/$2/device"
    mkdir -p "$d"
    echo "$3" >"$d/vendor"
    echo "$6" >"$d/boot_vga"
    printf 'DRIVER=%s\nPCI_SLOT_NAME=%s\n' "$5" "$4" >"$d/uevent"
}
# output R CARD-CONNECTOR STATUS
output() { mkdir -p "$1/sys/class/drm/$2" && echo "$3" >"$1/sys/class/drm/$2/status"; }
# server R PID COMM DEVICE
server() {
    mkdir -p "$1/proc/$2/fd"
    echo "$3" >"$1/proc/$2/comm"
    ln -s "$4" "$1/proc/$2/fd/12"
}

# A desktop: Intel iGPU without a monitor, the NVIDIA card drives the screen
R="$T/root"
card "$R" card0 0x8086 0000:00:02.0 i915 1
card "$R" card1 0x10de 0000:01:00.0 nvidia 0
output "$R" card0-HDMI-A-1 disconnected
output "$R" card1-DP-1 connected
server "$R" 1234 Xorg /dev/dri/card1
server "$R" 1300 gnome-shell /dev/nvidia0
mkdir -p "$R/etc/X11/xorg.conf.d" "$R/etc/udev/rules.d"
printf 'Section "Device"\n    Identifier "nv"\n    Driver "nvidia"\nEndSection\n' >"$R/etc/X11/xorg.conf"
chmod 600 "$R/etc/X11/xorg.conf"
echo '# the user own' >"$R/etc/udev/rules.d/61-vram-headless.rules"
echo 'Section "InputClass"' >"$R/etc/X11/xorg.conf.d/40-libinput.conf"
BEFORE=$(print_tree "$R")

run "$VRAM" headless --root "$R"
expect_eq "status: exit 0" "$RC" 0
expect_match "status: the iGPU, boot GPU, no monitor" "$OUT" \
    "card0 +Intel +0000:00:02.0 +i915 +boot GPU +no monitor"
expect_match "status: the NVIDIA card and its monitor" "$OUT" "card1 +NVIDIA .*monitor: DP-1"
expect_match "status: the display servers and their GPU" "$OUT" \
    "Xorg \(pid 1234, on card1\)|gnome-shell \(pid 1300, on card1\)"
expect_match "status: the desktop is on the NVIDIA card" "$OUT" "headless: off: the desktop runs on the NVIDIA card \(card1\)"
expect_match "status: what on would do" "$OUT" "vram headless on +moves it to the Intel GPU \(card0\)"

run "$VRAM" headless on --show --root "$R"
expect_eq "on (dry run): exit 0" "$RC" 0
expect_match "on: the Xorg snippet with the iGPU's BusID" "$OUT" 'BusID +"PCI:0:2:0"'
expect_match "on: the old xorg.conf is set aside" "$OUT" "set aside $R/etc/X11/xorg.conf"
expect_match "on: the Mutter tag on the NVIDIA card" "$OUT" 'KERNELS=="0000:01:00.0", TAG\+="mutter-device-ignore"'
expect_match "on: says it is a dry run" "$OUT" "dry run: nothing changed"
expect_eq "on (dry run) changes nothing" "$(print_tree "$R")" "$BEFORE"

run "$VRAM" headless on --yes --root "$R"
expect_eq "on --yes: exit 0" "$RC" 0
expect_match "on --yes: says to reboot and to move the cable" "$OUT" \
    "reboot .*plug the monitor into the Intel GPU's output"
expect_match "on --yes: the snippet is written" "$(cat "$R/etc/X11/xorg.conf.d/20-vram-headless.conf")" \
    'Driver +"modesetting"'
expect_eq "on --yes: the nvidia xorg.conf is out of the way" "$(test -e "$R/etc/X11/xorg.conf" || echo gone)" gone
expect_match "on --yes: KWin's device list" "$(cat "$R/etc/environment.d/90-vram-headless.conf")" \
    "^KWIN_DRM_DEVICES=/dev/dri/vram-display"
run "$VRAM" headless --root "$R"
expect_match "status after on: on, not in effect until a reboot" "$OUT" "headless: on since .* but not in effect yet: reboot"
run "$VRAM" headless on --yes --root "$R"
expect_match "on twice: already on" "$OUT" "already on"

run "$VRAM" headless off --root "$R"
expect_match "off (dry run): lists what it puts back" "$OUT" "put back $R/etc/X11/xorg.conf"
AFTER_ON=$(print_tree "$R")
run "$VRAM" headless off --root "$R"
expect_eq "off (dry run) changes nothing" "$(print_tree "$R")" "$AFTER_ON"
run "$VRAM" headless off --yes --root "$R"
expect_eq "off --yes: exit 0" "$RC" 0
expect_eq "on then off leaves the tree byte-identical" "$(print_tree "$R")" "$BEFORE"
run "$VRAM" headless off --yes --root "$R"
expect_match "off twice: nothing to restore" "$OUT" "headless is not on"

# a damaged record: off refuses and changes nothing
"$VRAM" headless on --yes --root "$R" >/dev/null
echo "remove ../../etc/passwd" >>"$R/var/lib/vram/headless/manifest"
DAMAGED=$(print_tree "$R")
run "$VRAM" headless off --yes --root "$R"
expect_eq "damaged record: exit 1" "$RC" 1
expect_match "damaged record: names the line" "$OUT" "manifest: line [0-9]+ is damaged"
expect_eq "damaged record: nothing changed" "$(print_tree "$R")" "$DAMAGED"
sed -i '$d' "$R/var/lib/vram/headless/manifest"
"$VRAM" headless off --yes --root "$R" >/dev/null
expect_eq "repaired record: off restores the tree" "$(print_tree "$R")" "$BEFORE"

# a place that cannot be written: refused before anything is done
B="$T/blocked"
cp -a "$R" "$B"
rm -rf "$B/etc/udev"
echo "not a directory" >"$B/etc/udev"
BLOCKED=$(print_tree "$B")
run "$VRAM" headless on --yes --root "$B"
expect_eq "unwritable: exit 1" "$RC" 1
expect_match "unwritable: names the place and the fix" "$OUT" "$B/etc/udev is not a directory; nothing was changed. Run it as root"
expect_eq "unwritable: nothing half-done" "$(print_tree "$B")" "$BLOCKED"
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$T"
    run setpriv --reuid=65534 --regid=65534 --clear-groups "$VRAM" headless on --yes --root "$R"
    expect_match "another user: cannot write, says to use root" "$OUT" "cannot write in $R(/[a-z0-9./-]*)? \(Permission denied\).*sudo"
    expect_eq "another user: nothing changed" "$(print_tree "$R")" "$BEFORE"
fi

# no other GPU: refused with the reason
N="$T/nvidia-only"
card "$N" card0 0x10de 0000:01:00.0 nvidia 1
output "$N" card0-DP-1 connected
run "$VRAM" headless on --yes --root "$N"
expect_eq "no iGPU: exit 1" "$RC" 1
expect_match "no iGPU: says why and what to do" "$OUT" "no other GPU can take the display: enable the integrated GPU"
run "$VRAM" headless --root "$N"
expect_match "no iGPU: status says on is not possible" "$OUT" "vram headless on is not possible here"
# an iGPU whose driver is not loaded cannot take the display either
card "$N" card1 0x8086 0000:00:02.0 "" 0
run "$VRAM" headless on --root "$N"
expect_eq "iGPU without a driver: exit 1" "$RC" 1

# not a Linux root, bad usage
mkdir -p "$T/empty"
run "$VRAM" headless --root "$T/empty"
expect_match "no sys/class/drm: says what it needs" "$OUT" "sys/class/drm not found: this works on Linux"
expect_eq "no sys/class/drm: exit 1" "$RC" 1
run "$VRAM" headless sideways
expect_eq "unknown verb: exit 2" "$RC" 2
expect_match "unknown verb: the choices" "$OUT" "say status, on or off"
run "$VRAM" headless --root "$T/nowhere"
expect_eq "missing root: exit 2" "$RC" 2
run "$VRAM" headless --frobnicate
expect_eq "unknown option: exit 2" "$RC" 2

# ---- a tree another user controls (issue 17, item 6), and records to distrust ----
. "$(dirname "$0")/users.sh"
if make_users; then
    # A's copy of the tree, etc/X11/xorg.conf.d a link out of it to a folder of root's
    mkdir -p "$T/outside"
    cp -a "$R" "$T/a/tree"
    L="$T/a/tree"
    rm -rf "$L/etc/X11/xorg.conf.d"
    ln -s "$T/outside" "$L/etc/X11/xorg.conf.d"
    chown -hR "$USER_A:$USER_A" "$L"
    LINKED=$(print_tree "$L")
    run timeout 10 "$VRAM" headless on --yes --root "$L"
    expect_eq "a link out of the tree: root's on --yes refuses (exit 1)" "$RC" 1
    expect_match "a link out of the tree: says which, and why" "$OUT" \
        "$L/etc/X11/xorg.conf.d(/20-vram-headless.conf)?: a symbolic link on the way, and vram follows none"
    expect_eq "a link out of the tree: nothing written outside it" "$(ls -A "$T/outside")" ""
    expect_eq "a link out of the tree: nothing changed in it" "$(print_tree "$L")" "$LINKED"
    # the record's own folder a link out of the tree
    rm "$L/etc/X11/xorg.conf.d" && mkdir "$L/etc/X11/xorg.conf.d" && chown "$USER_A" "$L/etc/X11/xorg.conf.d"
    mkdir -p "$T/outside/lib" && ln -s "$T/outside" "$L/var" && chown -h "$USER_A" "$L/var"
    run timeout 10 "$VRAM" headless on --yes --root "$L"
    expect_eq "var a link out of the tree: refused" "$RC" 1
    expect_eq "var a link out of the tree: no record written outside" "$(find "$T/outside" -mindepth 1 | grep -v '/lib$')" ""
    rm "$L/var"

    # A's forged record (version 1, which vram still reads) in a tree whose etc/ is root's:
    # off must not remove root's file, nor plant A's program in root's folder
    F="$T/a/forged"
    mkdir -p "$F/etc/cron.d" "$F/var/lib/vram/headless/backup"
    echo "root's own" >"$F/etc/important"
    printf '#!/bin/sh\necho owned\n' >"$F/var/lib/vram/headless/backup/1"
    chmod 755 "$F/var/lib/vram/headless/backup/1"
    printf 'vram-headless 1 100\nwrite etc/important\naside etc/cron.d/evil var/lib/vram/headless/backup/1\n' \
        >"$F/var/lib/vram/headless/manifest"
    chown "$USER_A:$USER_A" "$F" "$F/var" "$F/var/lib"
    chown -R "$USER_A:$USER_A" "$F/var/lib/vram"
    run timeout 10 "$VRAM" headless off --yes --root "$F"
    expect_eq "A's record: root's off --yes refuses (exit 1)" "$RC" 1
    expect_match "A's record: says whose it is, and what to do" "$OUT" \
        "$F/var/lib/vram/headless belongs to uid $UID_A, not to root: vram does not trust a record another user could have written"
    expect_eq "A's record: root's file is still there" "$(cat "$F/etc/important")" "root's own"
    expect_eq "A's record: nothing planted in root's folder" "$(ls -A "$F/etc/cron.d")" ""
    # the same record in a folder of root's, but the record itself A's, or anyone's to write
    chown root:root "$F/var/lib/vram/headless"
    run timeout 10 "$VRAM" headless off --yes --root "$F"
    expect_match "A's record in root's folder: refused" "$OUT" "manifest belongs to uid $UID_A"
    chown root:root "$F/var/lib/vram/headless/manifest"
    chmod 666 "$F/var/lib/vram/headless/manifest"
    run timeout 10 "$VRAM" headless off --yes --root "$F"
    expect_match "a record anyone may write: refused, with the fix" "$OUT" \
        "manifest may be changed by others \(mode 0666\): vram does not trust such a record; check it, then chmod go-w it"
    expect_eq "refused records: root's file is still there" "$(cat "$F/etc/important")" "root's own"

    # reads (issue 28, item 8): links in A's tree to a file outside it, out
    # of it by "..", to B's FIFO (a writer waits on it), and a process
    # folder that is a link out: root's status reads none of them, opens
    # no FIFO, and lists no card or server from outside the tree
    RT="$T/a/readtree"
    cp -a "$R" "$RT"
    echo 0x10de >"$T/outside/vendor"
    mkdir -p "$T/outside/proc4321/fd" "$RT/sys/class/drm/card2/device" "$RT/sys/class/drm/card3/device" \
        "$RT/sys/class/drm/card4/device"
    echo Xorg >"$T/outside/proc4321/comm"
    ln -s "$T/outside/vendor" "$RT/sys/class/drm/card2/device/vendor"
    ln -s ../../../../../../../../../../../../../../../../outside/vendor "$RT/sys/class/drm/card3/device/vendor"
    as_b mkfifo -m 666 "$T/b/fifo"
    chmod 711 "$T/b"
    $AS_B sh -c "exec 3>'$T/b/fifo'; echo opened >'$T/b/fifo.log'" &
    WRITER=$!
    JOBS="$JOBS $WRITER"
    waits() { grep -q wait_for_partner "/proc/$WRITER/wchan" 2>/dev/null; }
    wait_for 5 waits || not_ok "B's writer waits on its FIFO"
    ln -s "$T/b/fifo" "$RT/sys/class/drm/card4/device/vendor"
    ln -s "$T/outside/proc4321" "$RT/proc/4321"
    chown -hR "$USER_A:$USER_A" "$RT"
    run timeout 10 "$VRAM" headless --root "$RT"
    expect_eq "links in the tree: root's status answers" "$RC" 0
    expect_eq "no card read through a link out of the tree" "$(echo "$OUT" | grep -cE 'card[234]')" 0
    expect_eq "no server read through a process folder linked out" "$(echo "$OUT" | grep -c 'pid 4321')" 0
    # an open for reading would have let the writer through
    expect_eq "B's FIFO was never opened: its writer still waits" "$(waits && echo waits)" waits
    kill "$WRITER" 2>/dev/null
    chmod 700 "$T/b"

    # B runs on for its own tree with a link in it: the same rule for every user
    cp -a "$T/a/tree" "$T/b/tree"
    ln -s /tmp "$T/b/tree/etc/environment.d"
    chown -hR "$USER_B:$USER_B" "$T/b/tree"
    run timeout 10 $AS_B "$VRAM" headless on --yes --root "$T/b/tree"
    expect_match "B's own tree with a link: refused too" "$OUT" "environment.d: a symbolic link on the way"
else
    echo "# skipped the two-user cases: they need root, useradd and setpriv"
fi

# what off puts back is what on moved aside, and what it removes is what on wrote
H="$T/hashed"
cp -a "$R" "$H"
HBEFORE=$(print_tree "$H")
"$VRAM" headless on --yes --root "$H" >/dev/null
echo "# the admin's line" >>"$H/etc/X11/xorg.conf.d/20-vram-headless.conf"
EDITED=$(print_tree "$H")
run "$VRAM" headless off --yes --root "$H"
expect_eq "a file vram wrote, changed since: off refuses (exit 1)" "$RC" 1
expect_match "a file vram wrote, changed since: names it and what to do" "$OUT" \
    "$H/etc/X11/xorg.conf.d/20-vram-headless.conf changed since .vram headless on. wrote it: vram removes only what it wrote; move it away"
expect_eq "a file vram wrote, changed since: nothing half-done" "$(print_tree "$H")" "$EDITED"
run "$VRAM" headless off --root "$H"
expect_match "the dry run says so too" "$OUT" "changed since"
sed -i '$d' "$H/etc/X11/xorg.conf.d/20-vram-headless.conf"
echo "evil" >"$H/var/lib/vram/headless/backup/1"
SWAPPED=$(print_tree "$H")
run "$VRAM" headless off --yes --root "$H"
expect_eq "a backup swapped: off refuses (exit 1)" "$RC" 1
expect_match "a backup swapped: names it" "$OUT" \
    "$H/var/lib/vram/headless/backup/1 is not what .vram headless on. moved there from $H/etc/"
expect_eq "a backup swapped: nothing put back" "$(print_tree "$H")" "$SWAPPED"
# FIFOs: as xorg.conf (read by status), and where on would replace a file
Q="$T/fifo"
cp -a "$R" "$Q"
rm "$Q/etc/X11/xorg.conf" "$Q/etc/udev/rules.d/61-vram-headless.rules"
mkfifo "$Q/etc/X11/xorg.conf" "$Q/etc/udev/rules.d/61-vram-headless.rules"
FIFOS=$(print_tree "$Q")
run timeout 10 "$VRAM" headless --root "$Q"
expect_eq "a FIFO as xorg.conf: status answers, not waiting for a writer" "$RC" 0
run timeout 10 "$VRAM" headless on --yes --root "$Q"
expect_match "a FIFO where on would replace a file: refused by name" "$OUT" \
    "$Q/etc/udev/rules.d/61-vram-headless.rules is not a regular file \(a FIFO, a device...\): move it away first"
expect_eq "FIFOs: nothing changed" "$(print_tree "$Q")" "$FIFOS"

finish
