# ctest script: make the Debian package with CPack as `./run.sh package` does, unpack it with
# dpkg -x into a scratch root (nothing is installed on the system), and build and run against
# that root what a user of the package would: the CLI and its man pages, the C-only CMake
# project, a C program with pkg-config, examples/consumer (C++, shared libraries), a program
# that finds the profiles from the shared library's own prefix, and the Python module when the
# package has it.
foreach(v BUILD_DIR SOURCE_DIR WORK_DIR CC PKG_CONFIG COMPONENTS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "package_deb.cmake needs -D${v}=...")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/consumer_checks.cmake)
file(REMOVE_RECURSE "${WORK_DIR}")
postbox_run("cpack -G DEB" ${CMAKE_CPACK_COMMAND} -G DEB --config "${BUILD_DIR}/CPackConfig.cmake" -B "${WORK_DIR}/pkg")
file(GLOB debs "${WORK_DIR}/pkg/postbox_*_*.deb")
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "cpack made ${n} packages named postbox_<version>_<arch>.deb: ${debs}")
endif()
get_filename_component(deb_name "${debs}" NAME)
message(STATUS "package: ${deb_name}")
set(root "${WORK_DIR}/root")
postbox_run("dpkg -x ${deb_name}" dpkg -x "${debs}" "${root}")
set(prefix "${root}/usr")

# The shlibs control file: each component's library at its soname's version, and nothing else
# (the Python module is not a library to link against).
postbox_run("dpkg-deb -e ${deb_name}" dpkg-deb -e "${debs}" "${WORK_DIR}/control")
file(STRINGS "${WORK_DIR}/control/shlibs" shlibs)
list(LENGTH shlibs lines)
string(REPLACE "," ";" components "${COMPONENTS}")
list(LENGTH components want_lines)
if(NOT lines EQUAL want_lines)
  message(FATAL_ERROR "DEBIAN/shlibs has ${lines} lines, want one per component (${COMPONENTS}):\n${shlibs}")
endif()
foreach(c IN LISTS components)
  file(GLOB so "${prefix}/lib/*/libpostbox_${c}.so.*.*.*" "${prefix}/lib/libpostbox_${c}.so.*.*.*")
  if(NOT so)
    message(FATAL_ERROR "the package has no libpostbox_${c}.so")
  endif()
  execute_process(COMMAND readelf -d ${so} OUTPUT_VARIABLE dyn)
  if(NOT dyn MATCHES "SONAME\\)[^\n]*\\[libpostbox_${c}\\.so\\.([0-9.]+)\\]")
    message(FATAL_ERROR "libpostbox_${c}.so has no soname:\n${dyn}")
  endif()
  set(soversion "${CMAKE_MATCH_1}")
  if(NOT shlibs MATCHES "(^|;)libpostbox_${c} ${soversion} postbox \\(= [0-9.]+\\)(;|$)")
    message(FATAL_ERROR "DEBIAN/shlibs has no line for libpostbox_${c} at soversion ${soversion}:\n${shlibs}")
  endif()
endforeach()

# The CLI, and a man page for every subcommand its --help lists.
execute_process(COMMAND "${prefix}/bin/postbox" --version OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(rc OR NOT out MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "the packaged postbox --version failed: ${out}")
endif()
execute_process(COMMAND "${prefix}/bin/postbox" --help OUTPUT_VARIABLE help)
string(REGEX MATCHALL "\n  [a-z][a-z0-9]+ " subs "${help}")
foreach(s IN LISTS subs)
  string(STRIP "${s}" s)
  if(NOT EXISTS "${prefix}/share/man/man1/postbox-${s}.1")
    message(FATAL_ERROR "the package has no man page for 'postbox ${s}'")
  endif()
endforeach()
execute_process(COMMAND "${prefix}/bin/postbox" sim --machine delta --op bcast --algo binomial --p 8
  OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "the packaged postbox could not run sim on the delta profile: ${err}")
endif()

postbox_check_c_consumer("${SOURCE_DIR}" "${WORK_DIR}" "${prefix}")
postbox_check_pkg_config("${SOURCE_DIR}" "${WORK_DIR}" "${prefix}" "${CC}" "${PKG_CONFIG}" "${COMPONENTS}")
postbox_check_cxx_consumer("${SOURCE_DIR}" "${WORK_DIR}" "${prefix}" shared "")

# Profiles by name from the shared frontend, wherever the package lies.
postbox_build_consumer("${SOURCE_DIR}/tests/package" "${WORK_DIR}/profile-dirs" "${prefix}")
execute_process(COMMAND "${WORK_DIR}/profile-dirs/profile_dirs" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
file(REAL_PATH "${prefix}/share/postbox/profiles" want)
if(rc OR NOT out MATCHES "(^|\n)${want}\n" OR NOT out MATCHES "loaded delta")
  message(FATAL_ERROR "a program linking libpostbox_frontend.so does not search ${want}:\n${out}")
endif()
message(STATUS "profiles found from the shared library: ${want}")

# Python: import postbox from the package's dist-packages, with the python3 the module was built
# for (given PYTHON: built with the module).
file(GLOB pydirs "${prefix}/lib/python3*/dist-packages/postbox")
if(PYTHON)
  if(NOT pydirs)
    message(FATAL_ERROR "postbox was built with the Python module but the package has none")
  endif()
  list(GET pydirs 0 pydir)
  get_filename_component(pypath "${pydir}" DIRECTORY)
  set(ENV{PYTHONPATH} "${pypath}")
  postbox_run("python3 -c 'import postbox'" ${PYTHON} -c
    "import postbox, sys; t = postbox.tree('fibo', p=64, s=1, r=3); sys.exit(0 if postbox.__file__.startswith('${pypath}') and t.completion == 15 else 1)")
  message(STATUS "import postbox from ${pypath}: the Fibo-tree of 64 completes at step 15")
endif()
