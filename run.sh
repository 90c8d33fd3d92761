#!/usr/bin/env bash
# postbox's one entry point: installs what is missing, builds, then does its job.
#   ./run.sh demo    build (Release) and run the demo: measured, never canned
#   ./run.sh test    build, build the ThreadSanitizer and ASan + UBSan trees, run the whole
#                    suite through ctest
#   ./run.sh build   build only (build/bin/postbox)
#   ./run.sh bench   build and run the benchmarks in bench/
#   ./run.sh package build, then make the Debian package build/package/postbox_<version>_<arch>.deb
#                    (CPack: libraries, headers, CMake and pkg-config files, the CLI, man pages)
#   ./run.sh repro   build, then regenerate the papers' figures into docs/reproduction.md
#   ./run.sh stress  build the delay-injection tree and run the adversarial suites with 2000 seeds
#   ./run.sh explorer-shots  build, then screenshot each view of the explorer (postbox serve)
#                    into build/explorer-shots/ with headless Chromium
#   ./run.sh fuzz [SECONDS]  build, then fuzz the CLI's option parsing and, built with clang into
#                    build-fuzz/, each file parser's libFuzzer target (SECONDS each, default 60)
#   ./run.sh help    this text
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

ROOT=$PWD
BUILD=$ROOT/build
TSAN_BUILD=$ROOT/build-tsan
ASAN_BUILD=$ROOT/build-asan
INJECT_BUILD=$ROOT/build-inject
FUZZ_BUILD=$ROOT/build-fuzz
JOBS=$(nproc 2>/dev/null || echo 2)
WERROR=OFF
[ "${CI:-}" = "true" ] && WERROR=ON

PACKAGES=(g++ cmake make pkg-config libhwloc-dev libtbb-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libboost-dev libomp-dev graphviz util-linux
  libcpp-httplib-dev libgraphviz-dev chromium chromium-driver python3-selenium fonts-dejavu-core spin
  openmpi-bin libopenmpi-dev libboost-context-dev dpkg-dev file pybind11-dev python3-numpy python3-matplotlib
  python3-pytest)
# Only `./run.sh fuzz` builds with clang (libFuzzer, ASan, UBSan): the rest never needs it.
FUZZ_PACKAGES=(clang libclang-rt-dev)

say() { printf '==> %s\n' "$*"; }

install_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing missing Debian packages: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

configure_main() {
  local extra=("$@")
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPOSTBOX_WERROR=$WERROR "${extra[@]}" >/dev/null
}

build_main() {
  say "building (Release, $JOBS jobs) into build/"
  cmake --build "$BUILD" -j "$JOBS"
}

build_tsan() {
  say "building the ThreadSanitizer tree (concurrency suites) into build-tsan/"
  cmake -S "$ROOT" -B "$TSAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPOSTBOX_SANITIZE=thread -DPOSTBOX_INJECT_DELAYS=ON \
    -DPOSTBOX_BUILD_BENCH=OFF -DPOSTBOX_BUILD_TOOLS=OFF -DPOSTBOX_WERROR=$WERROR >/dev/null
  cmake --build "$TSAN_BUILD" -j "$JOBS" --target postbox_concurrency_tests
}

# GCC with AddressSanitizer and UndefinedBehaviorSanitizer at -O1: the library, the unit suites
# of POSTBOX_ASAN_SUITES (tests/CMakeLists.txt) and the parsers' fuzz targets on a standalone
# driver (tests/fuzz), nothing else: CI builds it from scratch on 2 cores.
build_asan() {
  say "building the AddressSanitizer + UBSan tree (unit suites, parser fuzz smoke runs) into build-asan/"
  cmake -S "$ROOT" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 -DCMAKE_C_FLAGS_DEBUG=-O1 \
    -DPOSTBOX_SANITIZE=address,undefined -DPOSTBOX_BUILD_BENCH=OFF -DPOSTBOX_BUILD_TOOLS=OFF -DPOSTBOX_WERROR=$WERROR >/dev/null
  cmake --build "$ASAN_BUILD" -j "$JOBS" --target postbox_asan_tests
}

# Release with delay injection (docs/barrier.md, "Proof"): the adversarial suites only.
build_inject() {
  say "building the delay-injection tree (adversarial suites) into build-inject/"
  cmake -S "$ROOT" -B "$INJECT_BUILD" -DCMAKE_BUILD_TYPE=Release -DPOSTBOX_INJECT_DELAYS=ON \
    -DPOSTBOX_BUILD_BENCH=OFF -DPOSTBOX_BUILD_TOOLS=OFF -DPOSTBOX_WERROR=$WERROR >/dev/null
  cmake --build "$INJECT_BUILD" -j "$JOBS" --target postbox_adversarial_tests
}

# clang with ASan, UBSan and libFuzzer coverage: the parsers' fuzz targets only (tests/fuzz).
build_fuzz() {
  say "building the parsers' libFuzzer targets (clang, ASan + UBSan) into build-fuzz/"
  cmake -S "$ROOT" -B "$FUZZ_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DPOSTBOX_SANITIZE=address,undefined -DPOSTBOX_LIBFUZZER=ON -DPOSTBOX_BUILD_BENCH=OFF -DPOSTBOX_BUILD_TOOLS=OFF \
    -DPOSTBOX_WERROR=$WERROR >/dev/null
  cmake --build "$FUZZ_BUILD" -j "$JOBS" --target postbox_fuzz_parsers
}

cmd="${1:-help}"
case "$cmd" in
  demo)
    install_packages
    configure_main
    build_main
    exec "$ROOT/tools/demo.sh" "$BUILD/bin/postbox"
    ;;
  test)
    install_packages
    build_tsan
    build_inject
    build_asan
    configure_main -DPOSTBOX_TSAN_BUILD_DIR="$TSAN_BUILD" -DPOSTBOX_INJECT_BUILD_DIR="$INJECT_BUILD" \
      -DPOSTBOX_ASAN_BUILD_DIR="$ASAN_BUILD"
    build_main
    say "running the suite (unit tests, the TSan concurrency suites, the ASan + UBSan unit suites and parser fuzz smoke runs, the install check)"
    cd "$BUILD"
    ctest --output-on-failure -j "$JOBS"
    ;;
  build)
    install_packages
    configure_main
    build_main
    say "the CLI is at build/bin/postbox"
    ;;
  bench)
    install_packages
    configure_main
    build_main
    shift || true
    exec "$ROOT/bench/run_all.sh" "$BUILD" "$@"
    ;;
  package)
    install_packages
    configure_main
    build_main
    say "making the Debian package (CPack) into build/package/"
    cd "$BUILD"
    cpack -G DEB -B "$BUILD/package" | grep -E '^CPack: - package:' || { echo "run.sh: cpack failed" >&2; exit 1; }
    ;;
  repro)
    install_packages
    configure_main
    build_main
    exec "$ROOT/tools/repro.sh" "$BUILD/bin/postbox"
    ;;
  stress)
    install_packages
    build_inject
    say "adversarial suites, ${POSTBOX_ADVERSARIAL_SEEDS:=2000} seeds per configuration"
    export POSTBOX_ADVERSARIAL_SEEDS POSTBOX_INJECT_SEEDS=${POSTBOX_INJECT_SEEDS:-$POSTBOX_ADVERSARIAL_SEEDS}
    export POSTBOX_TEST_TIMEOUT_S=${POSTBOX_TEST_TIMEOUT_S:-3600}
    for t in adversarial_test mailbox_inject_test; do "$INJECT_BUILD/bin/$t" --gtest_brief=1; done
    ;;
  explorer-shots)
    install_packages
    configure_main
    build_main
    say "screenshots of the explorer's views into build/explorer-shots/"
    # Debian's python3-selenium belongs to /usr/bin/python3, which may not be first on PATH.
    exec /usr/bin/python3 "$ROOT/tests/explorer/browser_test.py" "$BUILD/bin/postbox" --shots "$BUILD/explorer-shots"
    ;;
  fuzz)
    PACKAGES+=("${FUZZ_PACKAGES[@]}")
    install_packages
    seconds="${2:-60}"
    case "$seconds" in ''|*[!0-9]*) echo "run.sh: fuzz SECONDS must be a whole number, got '$seconds'" >&2; exit 2 ;; esac
    configure_main
    say "building the CLI fuzz target (tests/fuzz)"
    cmake --build "$BUILD" -j "$JOBS" --target postbox_fuzz_cli
    build_fuzz
    "$BUILD/bin/postbox_fuzz_cli" --seconds "$seconds" --seed "$(date +%s)"
    # -timeout=30: hwloc loads synthetic descriptions and XML in a child stopped at 10 s (topology.hpp).
    for t in plan_json goal calibration profile topology_xml rational shape synthetic mesh source_list network_dot; do
      say "libFuzzer: $t for $seconds s (new inputs into build-fuzz/corpus/$t; a crash leaves crash-* in build-fuzz/)"
      mkdir -p "$FUZZ_BUILD/corpus/$t"
      (cd "$FUZZ_BUILD" && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$FUZZ_BUILD/bin/postbox_fuzz_$t" \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
        "corpus/$t" "$ROOT/tests/fuzz/corpus/$t" 2>&1 | grep -v '^#[0-9]')
    done
    ;;
  help|-h|--help)
    sed -n '2,/^[^#]/{/^#/p;}' "$0" | sed 's/^# \{0,1\}//'  # lines 2.. up to the first non-comment
    ;;
  *)
    echo "run.sh: unknown command '$cmd' (try: demo, test, build, bench, package, repro, stress, explorer-shots, fuzz)" >&2
    exit 2
    ;;
esac
