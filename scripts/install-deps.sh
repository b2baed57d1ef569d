#!/usr/bin/env bash
# Install what memleakd needs to build, run and test, from Debian 12 packages.
set -euo pipefail
packages=(
        meson ninja-build pkg-config gcc g++ clang llvm bpftool
        libclang-rt-14-dev              # tests/fuzz: libFuzzer and the sanitizers for clang (a Recommends of clang)
        libbpf-dev libelf-dev libdw-dev libiberty-dev zlib1g-dev liblzma-dev libsystemd-dev libcjson-dev
        libprotobuf-c-dev protobuf-c-compiler  # memleakctl report --format pprof: profile.proto compiled by protoc-c
        systemd python3 binutils elfutils
        scdoc                           # the man pages (docs/man/*.scd)
        man-db bash-completion zsh      # tests: render the man pages, run the shell completions
        rustc                           # tests: Rust leaking programs, built with Debian's rustc
        libgoogle-perftools-dev libjemalloc-dev libmimalloc-dev  # tests: programs on each allocator
        musl-tools                      # tests: programs on musl (as in Alpine containers)
        nodejs                          # tests: runs memleakctl html's page script
        chromium                        # tests: opens memleakctl html's page headless (flame graph, diff, no network)
        libc6-dbg                       # tests: name glibc's local functions (start_thread, __libc_start_call_main)
        golang-go                       # tests: go tool pprof reads memleakctl's pprof profiles
        valgrind                        # tests: memcheck is the reference for the reachability classes
        prometheus prometheus-node-exporter  # tests: promtool checks the metrics, node_exporter serves them to Prometheus
        debootstrap systemd-container   # tests/e2e: boots a Debian root under systemd-nspawn
        build-essential dpkg-dev debhelper lintian  # tests/e2e: builds and checks the .deb (scripts/build-deb.sh)
)
missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
        echo "Installing: ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
