# users.sh: two unprivileged users for the tests of what one local user can
# do to another (docs/security.md), sourced after lib.sh. As root (CI), it
# creates two users of this test alone (USER_A and USER_B: vramt<PID>a and
# vramt<PID>b, each with a group of its own), removed with their processes
# when the test ends, makes $T reachable by them, and copies what they run
# (vram, libvramcap, the simulated driver, the test programs) under $T/bin:
# the build tree may sit in a folder only root can enter (/root), and an
# ASan build is no different. No user of the machine is used or assumed.
# Elsewhere users_ok is false and the tests that need them skip.
#   as_a CMD...  as_b CMD...   run CMD as that user, the environment kept
#   AS_A, AS_B                 the same as words, for timeout: timeout 10 $AS_B CMD

users_ok() { [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null && command -v setpriv >/dev/null; }

# user_make LETTER: a new user of this test alone, vramt<PID>LETTER, with a
# group of its own, no home and no shell; USER_MADE its name. It goes, with
# its group and every process it runs, when the test ends. One of that name
# already there is removed first if a killed run of the same pid left it
# (its comment says so), else another name is taken: no user this test did
# not make is touched. Tests run in parallel: useradd and userdel wait for
# the lock another holds.
USER_MARK="vram test user (removed at the test end)"
user_make() {
    for _n in "" 1 2 3 4 5 6 7 8 9; do
        USER_MADE="vramt$$$1$_n"
        if id -u "$USER_MADE" >/dev/null 2>&1; then
            [ "$(getent passwd "$USER_MADE" | cut -d: -f5)" = "$USER_MARK" ] || continue
            user_gone "$USER_MADE"
        fi
        getent group "$USER_MADE" >/dev/null && continue
        for _ in $(seq 1 100); do
            useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
                --user-group --comment "$USER_MARK" "$USER_MADE" >/dev/null 2>&1 && break
            sleep 0.1
        done
        break
    done
    id -u "$USER_MADE" >/dev/null 2>&1 || return 1
    USERS_MADE="${USERS_MADE:-} $USER_MADE"
    [ -n "${USERS_AT_EXIT:-}" ] || AT_EXIT="$AT_EXIT users_gone;"
    USERS_AT_EXIT=1
}

# user_gone NAME: its processes killed, the user and its group removed
user_gone() {
    _uid=$(id -u "$1" 2>/dev/null) || _uid=""
    if [ -n "$_uid" ]; then
        pkill -KILL -U "$_uid" 2>/dev/null
        # -f: its killed processes may be zombies until this shell reaps them
        for _ in $(seq 1 100); do
            userdel -f "$1" >/dev/null 2>&1 && break
            id -u "$1" >/dev/null 2>&1 || break
            sleep 0.1
        done
    fi
    if getent group "$1" >/dev/null; then
        for _ in $(seq 1 100); do
            groupdel "$1" >/dev/null 2>&1 && break
            getent group "$1" >/dev/null || break
            sleep 0.1
        done
    fi
}
users_gone() { for _u in ${USERS_MADE:-}; do user_gone "$_u"; done; }

# make_users: 0 when both users exist and can run $VRAM
make_users() {
    users_ok || return 1
    user_make a || return 1
    USER_A=$USER_MADE
    user_make b || return 1
    USER_B=$USER_MADE
    UID_A=$(id -u "$USER_A")
    GID_A=$(id -g "$USER_A")
    UID_B=$(id -u "$USER_B")
    GID_B=$(id -g "$USER_B")
    chmod 755 "$T"
    mkdir -p "$T/bin/sim" "$T/a" "$T/b" "$T/shared"
    chown "$USER_A:$USER_A" "$T/a"
    chown "$USER_B:$USER_B" "$T/b"
    chmod 700 "$T/a" "$T/b"
    chmod 1777 "$T/shared" # what /dev/shm is: anyone writes, only the owner removes
    cp "$VRAM" "$T/bin/vram"
    cp "$SHIM" "$T/bin/libvramcap.so"
    for f in "$(dirname "$VRAM")"/sim/lib*.so*; do [ -d "$f" ] || cp -P "$f" "$T/bin/sim/"; done
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
