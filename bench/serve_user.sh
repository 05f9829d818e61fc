# serve_user.sh: sourced by the benches that run vram serve. As root (the
# GPU machines run commands as root) vram serve runs its models as
# vram-model, the unprivileged user the package makes (docs/serve.md, "Who
# a model runs as"): made here when missing, as the package makes it, and
# let through to what the models run: every folder above this tree, above
# Python's packages and above the weights gets o+x, .devbuild's files o+r,
# the weights' folder (FILES) is theirs to write as /tmp is, and the user
# gets its home (a machine lent for the run; on one of yours, install vram
# instead).
# Says whether the models' user can import torch and read libvramcap.
if [ "$(id -u)" -eq 0 ]; then
    id -u vram-model >/dev/null 2>&1 ||
        useradd --system --user-group --home-dir /var/lib/vram/models --shell /usr/sbin/nologin \
            vram-model
    _su_tree=$(cd "$(dirname "${BASH_SOURCE:-$0}")/.." && pwd)
    _su_as() { setpriv --reuid=vram-model --regid=vram-model --clear-groups -- "$@"; }
    for _su_p in "$_su_tree/bench/gpu" "$_su_tree/.devbuild" ${FILES:-} "$(command -v python3)" \
        $(python3 -c 'import site; print(" ".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null); do
        _su_d=$(readlink -f "$_su_p" 2>/dev/null || echo /)
        [ -e "$_su_d" ] || continue
        _su_as test -x "$_su_d" 2>/dev/null && continue # reached already
        while [ -n "$_su_d" ] && [ "$_su_d" != / ]; do
            [ -d "$_su_d" ] && chmod o+x "$_su_d" && echo "serve_user.sh: o+x $_su_d (for vram-model)" >&2
            _su_d=$(dirname "$_su_d")
        done
    done
    chmod -R o+rX "$_su_tree/bench" "$_su_tree/.devbuild" 2>/dev/null
    # the weights the models make on first use (gpu_trace.sh), their home (caches)
    [ -z "${FILES:-}" ] || chmod 1777 "$FILES"
    mkdir -p /var/lib/vram/models && chown vram-model:vram-model /var/lib/vram/models
    if ! _su_as python3 -c 'import torch' >/dev/null 2>&1; then
        echo "serve_user.sh: vram-model cannot import torch: the PyTorch models will not start" >&2
    fi
    [ ! -e "$_su_tree/.devbuild/libvramcap.so" ] || _su_as test -r "$_su_tree/.devbuild/libvramcap.so" ||
        echo "serve_user.sh: vram-model cannot read .devbuild/libvramcap.so" >&2
fi
