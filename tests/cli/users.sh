# users.sh: two unprivileged users for the tests of what one local user can
# do to another (docs/security.md), sourced after lib.sh. As root (CI), it
# creates vramsec_a and vramsec_b when absent ($T is reachable by them: lib.sh),
# and copies what they run (vram, libvramcap, the simulated driver, the
# test programs) under $T/bin: the build tree may sit in a folder only root
# can enter (/root), and an ASan build is no different. Elsewhere users_ok
# is false and the tests that need them skip.
#   as_a CMD...  as_b CMD...   run CMD as that user, the environment kept
#   AS_A, AS_B                 the same as words, for timeout: timeout 10 $AS_B CMD

users_ok() { [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null && command -v setpriv >/dev/null; }

# make_users: 0 when both users exist and can run $VRAM
make_users() {
    users_ok || return 1
    for u in vramsec_a vramsec_b; do
        # tests run in parallel: another may be adding one (useradd locks /etc/passwd)
        for _ in $(seq 1 50); do
            id -u "$u" >/dev/null 2>&1 && break
            useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
                --user-group "$u" >/dev/null 2>&1 || sleep 0.1
        done
        id -u "$u" >/dev/null 2>&1 || return 1
    done
    UID_A=$(id -u vramsec_a)
    GID_A=$(id -g vramsec_a)
    UID_B=$(id -u vramsec_b)
    GID_B=$(id -g vramsec_b)
    mkdir -p "$T/bin/sim" "$T/a" "$T/b" "$T/shared"
    chown vramsec_a:vramsec_a "$T/a"
    chown vramsec_b:vramsec_b "$T/b"
    chmod 700 "$T/a" "$T/b"
    chmod 1777 "$T/shared" # what /dev/shm is: anyone writes, only the owner removes
    cp "$VRAM" "$T/bin/vram"
    cp "$SHIM" "$T/bin/libvramcap.so"
    cp -P "$(dirname "$VRAM")"/sim/lib*.so* "$T/bin/sim/"
    for p in ${SWAPMODEL:-} ${TESTMODEL:-}; do cp "$p" "$T/bin/"; done
    cp "$SRC/tests/fixtures/machines/two-16g.json" "$T/bin/machine.json"
    chmod -R a+rX "$T/bin"
    VRAM="$T/bin/vram"
    SHIM="$T/bin/libvramcap.so"
    [ -z "${SWAPMODEL:-}" ] || SWAPMODEL="$T/bin/$(basename "$SWAPMODEL")"
    [ -z "${TESTMODEL:-}" ] || TESTMODEL="$T/bin/$(basename "$TESTMODEL")"
    export VRAM_SIM="$T/bin/machine.json" LD_LIBRARY_PATH="$T/bin/sim"
    # one simulated machine for everyone: its ledger is 0666 (sim/state.c)
    export VRAM_RUN_DIR="$T/shared"
    "$VRAM" status >/dev/null 2>&1 # makes the ledger, in $T, where only root may create it
    AS_A="setpriv --reuid=$UID_A --regid=$GID_A --clear-groups --"
    AS_B="setpriv --reuid=$UID_B --regid=$GID_B --clear-groups --"
    as_a "$VRAM" --version >/dev/null 2>&1 && as_b "$VRAM" --version >/dev/null 2>&1
}

as_a() { setpriv --reuid="$UID_A" --regid="$GID_A" --clear-groups -- "$@"; }
as_b() { setpriv --reuid="$UID_B" --regid="$GID_B" --clear-groups -- "$@"; }
