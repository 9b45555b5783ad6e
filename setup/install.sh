#!/bin/sh
# Installs what the kit needs on Debian 12, and nothing that is already there:
# the Debian packages in setup/debian-packages.txt and a Python virtual
# environment (.venv) with the kit installed in it. Safe to run again; a
# second run installs nothing. Uses sudo only when not root.
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi

# --- Debian packages -------------------------------------------------------
wanted=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' setup/debian-packages.txt | awk '{print $1}')
missing=""
for pkg in $wanted; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
    echo "setup: installing Debian packages:$missing"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    # --no-install-recommends: the recommends of qemu-system-arm alone pull in
    # hundreds of megabytes of firmware and GUI libraries the kit never uses.
    # shellcheck disable=SC2086
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi

# --- Python virtual environment ---------------------------------------------
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $($PY --version 2>&1)"
    $PY -m venv .venv
fi
stamp=.venv/.ampkit-installed
want=$(cat pyproject.toml setup/requirements.lock | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    # the locked versions first, then the kit itself (editable) without
    # letting pip pick other versions for it
    echo "setup: installing setup/requirements.lock and the ampkit package into .venv"
    .venv/bin/python -m pip install -q -r setup/requirements.lock
    .venv/bin/python -m pip install -q --no-deps -e .
    echo "$want" > "$stamp"
fi
