#!/usr/bin/env bash
# `pip install ./python` works offline: into a fresh venv, with the setuptools and wheel
# Debian installs (python3-setuptools, python3-wheel; --system-site-packages shows them
# to the venv, --no-build-isolation lets pip build with them instead of downloading
# its own). Then, from outside the checkout, every module of the source imports from
# the installed copy, and the version is pyproject's.
# Usage: install_test.sh SOURCE_DIR
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy: setuptools builds inside the tree it is given (build/, *.egg-info).
cp -r "$src/python" "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
PIP_CONFIG_FILE=/dev/null "$work/venv/bin/pip" install --quiet --disable-pip-version-check \
  --no-build-isolation --no-index "$work/src"
cd "$work"
"$work/venv/bin/python" - "$work/src/corral" <<'PY'
import importlib, os, sys
import corral
assert corral.__file__.startswith(sys.prefix), f"imported {corral.__file__}, not the venv's"
modules = sorted(n[:-3] for n in os.listdir(sys.argv[1]) if n.endswith(".py") and n != "__init__.py")
for name in modules:
    importlib.import_module("corral." + name)
from importlib.metadata import version
assert version("corral-client") == corral.__version__, (version("corral-client"), corral.__version__)
print(f"installed corral {corral.__version__} in {os.path.dirname(corral.__file__)}: "
      f"{len(modules)} modules import")
PY
