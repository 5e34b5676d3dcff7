#!/usr/bin/env bash
# Rebuild the benchmark corpus: pinned PyPI wheels of real PyTorch library code, .py files only.
#
#     bash bench/corpus.sh DIR
#
# Each package lands in DIR/NAME-VERSION/ (a .complete marker makes reruns skip it), wheels are
# cached in DIR/.wheels/. Pinned so every number in bench/RESULTS.md refers to the same 2,040 files
# (557,691 lines); bump the versions together with a new table there. Needs pip and unzip-free Python only.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
DIR=$1
PYTHON=${PYTHON:-python3}

# name==version, one a line (the distribution names pip knows).
PACKAGES="
lightning==2.6.6
accelerate==1.15.0
peft==0.21.2
trl==1.16.0
torchmetrics==1.9.0
torch_geometric==2.8.1
timm==1.0.31
"

mkdir -p "$DIR/.wheels"
for spec in $PACKAGES; do
    name=${spec%%==*}
    version=${spec##*==}
    target="$DIR/$name-$version"
    if [ -f "$target/.complete" ]; then
        continue
    fi
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --dest "$DIR/.wheels" "$spec"
    wheel=$(ls "$DIR/.wheels/"*.whl | grep -i -E "/${name//[-_]/[-_]}-${version}-" | head -n 1)
    rm -rf "$target"
    mkdir -p "$target"
    # Keep only the Python sources: the benchmark lints code, not data.
    "$PYTHON" - "$wheel" "$target" <<'PY'
import sys, zipfile
wheel, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as archive:
    for member in archive.namelist():
        if member.endswith(".py"):
            archive.extract(member, target)
PY
    touch "$target/.complete"
done

files=$(find "$DIR" -name '*.py' -not -path "$DIR/.wheels/*" | wc -l)
echo "$DIR: $files .py files"
