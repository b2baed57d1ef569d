#!/usr/bin/env bash
# Build memleakd's .deb from this tree, the way a packager does (dpkg-buildpackage -us -uc),
# in a copy of it, so the tree gets no debian/ build leftovers and the source package none of
# the tree's build directories. Then check it with lintian: an error fails the build.
#
#   scripts/build-deb.sh [OUTDIR]     (default: build-deb/; as root installs the build tools)
#
# The .deb, the source package and lintian's report end up in OUTDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
out=$(realpath -m "${1:-build-deb}")

tools=(build-essential dpkg-dev debhelper lintian)   # build-essential: dpkg-buildpackage's own need
missing=()
for p in "${tools[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
        [ "$(id -u)" -eq 0 ] || { echo "build-deb.sh: install ${missing[*]} first" >&2; exit 1; }
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

version=$(dpkg-parsechangelog -l debian/changelog -S Version)
work=$(mktemp -d /tmp/memleakd-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
tree="$work/memleakd-$version"
mkdir "$tree"
# The files of the tree as git sees them (committed or not, ignored ones left out); without git,
# everything but build directories.
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$src" ls-files -z --cached --others --exclude-standard |
                while IFS= read -r -d '' f; do
                        if [ -e "$f" ] || [ -L "$f" ]; then cp -a --parents "$f" "$tree"; fi   # not deleted
                done
else
        tar -C "$src" --exclude='./build' --exclude='./build-*' --exclude='./obj-*' -cf - . | tar -C "$tree" -xf -
fi

(cd "$tree" && dpkg-buildpackage -us -uc)
mkdir -p "$out"
rm -f "$out"/memleakd_* "$out"/memleakd-dbgsym_*
cp "$work"/memleakd_* "$work"/memleakd-dbgsym_* "$out"/
deb="$out/memleakd_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb"
echo "build-deb.sh: $deb"
# Errors fail; warnings are listed (lintian.log) for whoever packages next.
lintian --fail-on error --tag-display-limit 0 "$out"/memleakd_"${version}"_*.changes | tee "$out/lintian.log"
