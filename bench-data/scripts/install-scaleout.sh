#!/usr/bin/env bash
# Installs what bench-data/scripts/scaleout_compare.py needs besides cqldb: a headless Java
# runtime (Debian's package; PySpark 4 needs Java 17 or newer), and the Python packages pyspark
# and duckdb. Safe to run again: each step is skipped when its result is already there.
# Not part of CI. Usage: bash bench-data/scripts/install-scaleout.sh   (as root, or with sudo)
set -euo pipefail

PYTHON=${PYTHON:-python3}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

java_major() {
  # "17.0.15" -> 17, "1.8.0_392" -> 8; empty when there is no java
  command -v java >/dev/null 2>&1 || return 0
  java -version 2>&1 | sed -n 's/.*version "\([0-9][0-9.]*\).*/\1/p' | head -1 |
    awk -F. '{ if ($1 == 1) print $2; else print $1 }'
}

major=$(java_major)
if [ -n "$major" ] && [ "$major" -ge 17 ]; then
  echo "java $major already installed"
else
  $SUDO apt-get update
  # bookworm has openjdk-17-jre-headless; later releases name another version, which
  # default-jre-headless points to.
  if apt-cache show openjdk-17-jre-headless >/dev/null 2>&1; then
    pkg=openjdk-17-jre-headless
  else
    pkg=default-jre-headless
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "$pkg"
  echo "installed $pkg: java $(java_major)"
fi

missing=()
for mod in pyspark duckdb; do
  if ! "$PYTHON" -c "import $mod" >/dev/null 2>&1; then missing+=("$mod"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "pyspark and duckdb already installed"
else
  # A Debian python3 refuses pip installs outside a virtual environment (PEP 668) unless told
  # --break-system-packages; a pyenv or venv python takes them as they are.
  log=$(mktemp)
  if ! "$PYTHON" -m pip install "${missing[@]}" 2>&1 | tee "$log"; then
    if grep -q externally-managed-environment "$log"; then
      "$PYTHON" -m pip install --break-system-packages "${missing[@]}"
    else
      rm -f "$log"
      exit 1
    fi
  fi
  rm -f "$log"
fi

"$PYTHON" -c 'import duckdb, pyspark; print("duckdb", duckdb.__version__, "pyspark", pyspark.__version__)'
