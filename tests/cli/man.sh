#!/bin/sh
# The man pages (docs/man/*.scd, built with scdoc): one for vram, one for
# every command, one for vram.conf; man renders each without a warning;
# vram help shows the same text as man; every option a command's --help
# lists is in its page.
. "$(dirname "$0")/lib.sh"
: "${MANDIR:?}"
if [ "${MAN_PAGES:-0}" -eq 0 ]; then
    echo "man pages not built (no scdoc or groff): skipped"
    exit 77
fi
command -v man >/dev/null || { not_ok "man is installed (man-db)"; finish; exit 1; }
# man's own text rendering: 80 columns, overstrikes and tabs out
man_text() { LC_ALL=C MANWIDTH=80 man -l "$1" 2>/dev/null | col -bx | cat -s | sed 's/ *$//'; }

for c in $("$VRAM" complete commands) ""; do
    page=vram${c:+-$c}
    f="$MANDIR/$page.1"
    if [ ! -f "$f" ]; then
        not_ok "$page.1 exists"
        continue
    fi
    warn=$(LC_ALL=C MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
    expect_eq "man -l $page.1 renders without a warning" "$warn" ""
    # each page rendered once (man and groff take a while), then read
    text=$(man_text "$f")
    help=$("$VRAM" help ${c:-vram})
    expect_match "man -l $page.1 has its NAME" "$text" "^ +$page - "
    expect_eq "vram help ${c:-vram} is man's text" "$help" "$text"
    [ -n "$c" ] || continue
    missing=""
    for o in $("$VRAM" complete options "$c"); do
        [ "$o" = --help ] && continue
        printf '%s\n' "$help" | grep -q -- "$o\b" || missing="$missing $o"
    done
    expect_eq "every option of vram $c --help is in $page(1)" "$missing" ""
done
f="$MANDIR/vram.conf.5"
expect_eq "man -l vram.conf.5 renders without a warning" \
    "$(LC_ALL=C man --warnings -l "$f" 2>&1 >/dev/null)" ""
# every setting vram serve reads: the lists its "unknown setting" messages
# give, from the table of settings (src/conf/settings.c)
printf '[serve]\nnot_a_setting = 1\n' >"$T/unknown-serve.conf"
printf '[serve]\nsocket = %s/s.sock\n[model m]\nnot_a_setting = 1\n' "$T" >"$T/unknown-model.conf"
keys=$(for c in serve model; do
    "$VRAM" serve --check --config "$T/unknown-$c.conf" 2>&1 |
        sed -n "s/.*unknown setting 'not_a_setting'[^(]*(\(.*\))$/\1/p" | tr -d ','
done | tr ' ' '\n' | grep . | sort -u)
expect_match "(the settings are read from vram serve's messages)" "$(echo $keys)" "command .*socket"
missing=""
text=$(man_text "$f") # rendered once: a render a setting took minutes on a loaded machine
for k in $keys; do
    printf '%s\n' "$text" | grep -q "^ *$k = " || missing="$missing $k"
done
expect_eq "vram.conf(5) describes every setting" "$missing" ""
# the documents the pages and the messages name are installed with them
# (in the package: /usr/share/doc/vram)
if INST=$(meson introspect "$BUILD" --installed 2>/dev/null); then
    missing=""
    for d in $(grep -rhoE 'docs/[a-z_-]+\.md' "$SRC/src" "$SRC/docs/man" | sort -u); do
        printf '%s' "$INST" | grep -q "/share/doc/vram/$(basename "$d")\"" || missing="$missing $d"
    done
    expect_eq "every document a page or a message names is installed" "$missing" ""
fi
finish
