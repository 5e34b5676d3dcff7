#!/usr/bin/env bash
# Run the rule, analysis and engine tests with the oldest and the newest libcst that pyproject.toml
# allows (libcst>=1.1), each in a fresh virtual environment.
#
#     bash bench/libcst_versions.sh [WORKDIR]
#
# Prints one line per version: the libcst installed and the pytest summary. Exits 1 if any fails.
set -uo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d -t leaklint-libcst-XXXX)}
PYTHON=${PYTHON:-python3}
oldest=$(sed -n 's/.*"libcst>=\([0-9.]*\)".*/\1/p' pyproject.toml)
status=0
for spec in "libcst==${oldest}.*" "libcst"; do
    venv="$work/venv-$(echo "$spec" | tr -c 'a-z0-9.\n' '_')"
    "$PYTHON" -m venv "$venv"
    # pip's own chatter goes to a log; a failed install stops the script with its tail.
    if ! { "$venv/bin/pip" install --upgrade pip && "$venv/bin/pip" install -e '.[test]' "$spec"; } >"$venv.pip.log" 2>&1; then
        echo "could not install $spec (see $venv.pip.log):" >&2
        tail -n 5 "$venv.pip.log" >&2
        exit 1
    fi
    installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("libcst"))')
    summary=$("$venv/bin/python" -m pytest -q -p no:cacheprovider tests/rules tests/analysis tests/engine -m 'not slow' 2>&1 | tail -n 1)
    echo "libcst $installed: $summary"
    case "$summary" in *failed*|*error*) status=1 ;; esac
done
exit $status
