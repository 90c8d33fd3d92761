# ctest script: install this build into a scratch prefix, then build and run against it what a
# user would (tests/consumer_checks.cmake): examples/consumer with the shared libraries and with
# the static ones, the C-only project examples/consumer-c, a C program with pkg-config alone;
# and check that the shared libraries export the public API only.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR CC PKG_CONFIG NM COMPONENTS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install_consumer.cmake needs -D${v}=...")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/consumer_checks.cmake)
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
postbox_run("cmake --install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

# Exported symbols: the C API (postbox_*) and namespace postbox only (cmake/postbox.map).
string(REPLACE "," ";" COMPONENTS "${COMPONENTS}")
foreach(c IN LISTS COMPONENTS)
  set(lib "${prefix}/lib/libpostbox_${c}.so")
  if(NOT EXISTS "${lib}")
    message(FATAL_ERROR "the install tree has no ${lib}")
  endif()
  execute_process(COMMAND ${NM} -DC --defined-only "${lib}" OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
  string(REGEX REPLACE "\n$" "" syms "${syms}")
  string(REPLACE "\n" ";" syms "${syms}")
  set(count 0)
  foreach(line IN LISTS syms)
    string(REGEX REPLACE "^[0-9a-f]+ [A-Za-z] " "" name "${line}")
    if(NOT name MATCHES "^(postbox_|postbox::|(typeinfo|typeinfo name|vtable|VTT|guard variable) for postbox::|(non-)?virtual thunk to postbox::|TLS (init|wrapper) function for postbox::|construction vtable for .*postbox::)"
       AND NOT name MATCHES "^POSTBOX_|^_fini$|^_init$")
      message(FATAL_ERROR "${lib} exports '${name}', outside the public API")
    endif()
    math(EXPR count "${count} + 1")
  endforeach()
  message(STATUS "libpostbox_${c}.so: ${count} exported symbols, all of the public API")
endforeach()

if(NOT MPIEXEC)
  set(MPIEXEC "")
endif()
postbox_check_cxx_consumer("${SOURCE_DIR}" "${WORK_DIR}" "${prefix}" shared "${MPIEXEC}")
postbox_check_cxx_consumer("${SOURCE_DIR}" "${WORK_DIR}" "${prefix}" static "")
postbox_check_c_consumer("${SOURCE_DIR}" "${WORK_DIR}" "${prefix}")
postbox_check_pkg_config("${SOURCE_DIR}" "${WORK_DIR}" "${prefix}" "${CC}" "${PKG_CONFIG}" "${COMPONENTS}")
