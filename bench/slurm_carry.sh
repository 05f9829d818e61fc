#!/bin/sh
# slurm_carry.sh: Debian 12's Slurm (22.05) and munge, for a GPU machine
# that has neither and cannot install them (bench/gpu_slurm.sh): the
# packages extracted into .slurmcarry/ (ignored by git; 64 MiB at most
# travels to the GPU machine, this is about 20), with every library they
# need that is not glibc's copied from this machine, and wrappers in
# .slurmcarry/bin that run each program on those libraries. Checks, here,
# that every dependency of every program and plugin resolves inside the
# carry or to glibc, and that each program starts (-V) with nothing but
# LD_LIBRARY_PATH in its environment. Prints the carry list last.
set -eu
cd "$(dirname "$0")/.."
C=$PWD/.slurmcarry
PKGS="slurmctld slurmd slurm-client slurm-wlm-basic-plugins libslurm38 munge libmunge2"
rm -rf "$C"
mkdir -p "$C/debs" "$C/root" "$C/lib" "$C/bin"
# apt-get download writes as _apt where it can: a folder it may enter
chmod 755 "$C" "$C/debs"
(cd "$C/debs" && apt-get download $PKGS >/dev/null 2>&1) || {
    echo "slurm_carry: apt-get download $PKGS failed (needs Debian 12's apt sources)" >&2
    exit 1
}
for d in "$C"/debs/*.deb; do dpkg -x "$d" "$C/root"; done
rm -rf "$C/debs" "$C/root/usr/share" "$C/root/etc" "$C/root/lib/systemd"
PLUG=$C/root/usr/lib/x86_64-linux-gnu/slurm-wlm
LIBS=$PLUG:$C/root/usr/lib/x86_64-linux-gnu:$C/lib
# glibc's own, which every Linux has (the GPU machine's is newer)
GLIBC='/(libc|libm|libpthread|libdl|librt|libresolv|libutil|ld-linux[^/]*)\.so'
elves() {
    find "$C/root" "$C/lib" -type f | while read -r f; do
        head -c 4 "$f" 2>/dev/null | grep -q 'ELF' && echo "$f"
    done
}
# what the programs and plugins need from outside the carry, copied in
# until nothing is missing (a copied library may need another)
for _ in 1 2 3 4; do
    new=0
    all=$(elves)
    for f in $all; do
        for lib in $(LD_LIBRARY_PATH=$LIBS ldd "$f" 2>/dev/null | awk '/=> \// { print $3 }' |
            grep -vE "$GLIBC" | grep -v "^$C/"); do
            base=$(basename "$lib")
            [ -e "$C/lib/$base" ] && continue
            cp -L "$lib" "$C/lib/$base"
            new=1
        done
    done
    [ $new = 0 ] && break
done
# Debian names the daemons NAME-wlm and links NAME to them (alternatives);
# Slurm knows which daemon it is by argv[0] (a slurmctld started as
# slurmctld-wlm reads the nodes' GRES as a client would: none)
for p in "$C"/root/usr/sbin/*-wlm; do
    ln -s "$(basename "$p")" "${p%-wlm}"
done
# the wrappers: the carry's libraries first, wherever the carry is. The
# daemons get them as LD_LIBRARY_PATH (slurmd hands its environment to
# slurmstepd, its spank epilog included); the commands users type get them
# from the loader's --library-path only, because srun and sbatch hand
# their environment to the job (the job's programs must find the
# machine's own libraries, not Debian 12's)
for p in "$C"/root/usr/sbin/* "$C"/root/usr/bin/*; do
    [ -f "$p" ] || continue
    n=$(basename "$p")
    case $n in *-wlm) continue ;; esac
    rel=${p#"$C"/}
    {
        echo "#!/bin/sh"
        echo "# $n from Debian 12, on the libraries carried with it (bench/slurm_carry.sh)"
        echo 'c=$(dirname "$(dirname "$(readlink -f "$0")")")'
        echo 'l="$c/root/usr/lib/x86_64-linux-gnu/slurm-wlm:$c/root/usr/lib/x86_64-linux-gnu:$c/lib"'
        case $n in
        slurmctld | slurmd | slurmstepd | munged | mungekey)
            echo "LD_LIBRARY_PATH=\"\$l\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\" exec \"\$c/$rel\" \"\$@\"" ;;
        *)
            echo "exec /lib64/ld-linux-x86-64.so.2 --library-path \"\$l\" --argv0 \"\$0\" \"\$c/$rel\" \"\$@\"" ;;
        esac
    } >"$C/bin/$n"
    chmod +x "$C/bin/$n"
done
# the checks: nothing resolved outside the carry but glibc; each starts alone
bad=0
for f in $(elves); do
    out=$(env -i LD_LIBRARY_PATH="$LIBS" ldd "$f" 2>&1 || true)
    miss=$(printf '%s\n' "$out" | grep 'not found' || true)
    outside=$(printf '%s\n' "$out" | awk '/=> \// { print $3 }' | grep -vE "$GLIBC" |
        grep -v "^$C/" || true)
    if [ -n "$miss$outside" ]; then
        echo "slurm_carry: ${f#"$C"/}: $miss $outside" >&2
        bad=1
    fi
done
# the clients read a configuration even for -V
printf 'ClusterName=carry\nSlurmctldHost=localhost\nNodeName=localhost\n' >"$C/check.conf"
# (slurmstepd answers only slurmd; ldd checked it above)
for p in slurmctld slurmd srun sbatch scontrol squeue sinfo scancel; do
    v=$(env -i SLURM_CONF="$C/check.conf" "$C/bin/$p" -V 2>&1 || true)
    case $v in
    slurm*22.05*) echo "ok: $p -V: $v" ;;
    *) echo "slurm_carry: $p -V: $v" >&2; bad=1 ;;
    esac
done
for p in munged mungekey; do
    v=$(env -i "$C/bin/$p" --version 2>&1 || true)
    case $v in
    munge-0.5*) echo "ok: $p --version: $v" ;;
    *) echo "slurm_carry: $p --version: $v" >&2; bad=1 ;;
    esac
done
rm -f "$C/check.conf"
[ $bad = 0 ] || exit 1
echo "carried ($(du -sh "$C" | cut -f1)):"
(cd "$C" && ls bin lib)
echo "libraries copied from this machine: $(ls "$C/lib" | tr '\n' ' ')"
