# Warnings and sanitizers as INTERFACE targets: linked privately (build interface only)
# by every postbox target, never exported, never set as global flags.
add_library(postbox_warnings INTERFACE)
target_compile_options(postbox_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
  # GCC 12 reports false positives inside libstdc++'s std::string at -O2/-O3 (GCC bug 105329,
  # -Wrestrict); -Wnull-dereference is left out for the same reason (istreambuf_iterator).
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
  $<$<BOOL:${POSTBOX_WERROR}>:-Werror>)

add_library(postbox_sanitize INTERFACE)
if(POSTBOX_SANITIZE)
  if(NOT POSTBOX_SANITIZE MATCHES "^(thread|address|undefined|address,undefined|undefined,address)$")
    message(FATAL_ERROR "POSTBOX_SANITIZE must be 'thread' or 'address,undefined', not '${POSTBOX_SANITIZE}'")
  endif()
  # Line tables (-g1) are what an ASan or UBSan report shows; with full -g the GCC ASan tree of
  # `./run.sh test` took about 1.5 times the CPU to compile (plan_export.cpp 22.6 s against
  # 14.8 s). TSan's reports name variables: -g there.
  if(POSTBOX_SANITIZE STREQUAL "thread")
    target_compile_options(postbox_sanitize INTERFACE -fsanitize=${POSTBOX_SANITIZE} -fno-omit-frame-pointer -g)
  else()
    target_compile_options(postbox_sanitize INTERFACE -fsanitize=${POSTBOX_SANITIZE} -fno-omit-frame-pointer -g1)
  endif()
  target_link_options(postbox_sanitize INTERFACE -fsanitize=${POSTBOX_SANITIZE})
  if(POSTBOX_SANITIZE STREQUAL "thread")
    target_compile_definitions(postbox_sanitize INTERFACE POSTBOX_TSAN=1)
  else()
    # Undefined behaviour stops the test (or the fuzzer) instead of printing and going on.
    target_compile_options(postbox_sanitize INTERFACE -fno-sanitize-recover=all)
  endif()
endif()
if(POSTBOX_LIBFUZZER)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "POSTBOX_LIBFUZZER needs clang (CMAKE_CXX_COMPILER=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  # Coverage for libFuzzer in every postbox target; the fuzz targets link -fsanitize=fuzzer.
  target_compile_options(postbox_sanitize INTERFACE -fsanitize=fuzzer-no-link)
endif()

add_library(postbox_options INTERFACE)
if(POSTBOX_INJECT_DELAYS)
  # Build-only, like the sanitizers: every postbox target of this tree sees the same sync_point().
  target_compile_definitions(postbox_options INTERFACE POSTBOX_INJECT_DELAYS=1)
endif()
target_link_libraries(postbox_options INTERFACE postbox_warnings postbox_sanitize)
