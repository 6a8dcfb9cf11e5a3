# Sourced by the bench scripts that need Python: one virtual environment with the pinned reference
# stack. onnxruntime is the release the extension loads; tokenizers and numpy are the versions pip
# chose for Python 3.11 when the parity fixture was first made.

REFERENCE_VENV=$BUILD_DIR/parity-venv
REFERENCE_REQUIREMENTS=(onnxruntime==1.31.1 tokenizers==0.23.3 numpy==2.4.6)

# Creates $REFERENCE_VENV (installing python3-venv if Debian's python3 lacks it) and installs
# whatever of the pinned requirements it does not have yet.
ensure_reference_venv() {
    local installed missing=() requirement
    installed=$("$REFERENCE_VENV/bin/python" -m pip freeze 2>/dev/null || true)
    for requirement in "${REFERENCE_REQUIREMENTS[@]}"; do
        grep -qixF "$requirement" <<<"$installed" || missing+=("$requirement")
    done
    if ((${#missing[@]} == 0)); then
        say "$REFERENCE_VENV has ${REFERENCE_REQUIREMENTS[*]}"
        return
    fi
    if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
        say "installing python3-venv"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
    fi
    [ -x "$REFERENCE_VENV/bin/python" ] || { say "creating $REFERENCE_VENV"; python3 -m venv "$REFERENCE_VENV"; }
    say "installing ${missing[*]}"
    "$REFERENCE_VENV/bin/python" -m pip install -q --progress-bar off "${REFERENCE_REQUIREMENTS[@]}"
}
