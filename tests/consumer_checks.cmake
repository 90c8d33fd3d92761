# Checks shared by install_consumer.cmake (the install tree) and package_deb.cmake (the .deb,
# unpacked): each configures, builds and runs a consumer project the way a user would, against
# the package under PREFIX.

function(postbox_run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${what} failed (${rc}): ${out}${err}")
  endif()
endfunction()

# A program the consumer built: runs it and checks its first line.
function(postbox_check_program exe pattern)
  execute_process(COMMAND "${exe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(rc OR NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "${exe} failed (a hang ends in a timeout): rc=${rc} out=${out} err=${err}")
  endif()
  string(STRIP "${out}" out)
  message(STATUS "${out}")
endfunction()

# configure + build a consumer project (SOURCE) into BUILD against PREFIX, with extra -D options.
function(postbox_build_consumer source build prefix)
  file(REMOVE_RECURSE "${build}")
  postbox_run("configuring ${source}" ${CMAKE_COMMAND} -S "${source}" -B "${build}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release ${ARGN})
  postbox_run("building ${source}" ${CMAKE_COMMAND} --build "${build}" -j 2)
endfunction()

# The libraries a program loads (ldd): fails unless it loads the library named WANT (from
# under PREFIX) and none matching AVOID.
function(postbox_check_loads exe prefix want avoid)
  execute_process(COMMAND ldd "${exe}" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(rc OR NOT out MATCHES "${want}[^\n]*=> ${prefix}")
    message(FATAL_ERROR "${exe} does not load ${want} from ${prefix}:\n${out}")
  endif()
  if(out MATCHES "${avoid}")
    message(FATAL_ERROR "${exe} loads ${avoid}, which it should not need:\n${out}")
  endif()
  string(REPLACE "\\" "" shown "${want}")
  message(STATUS "ldd ${exe}: ${shown} from ${prefix}, no ${avoid}")
endfunction()

# examples/consumer (C++, every component): KIND shared or static.
function(postbox_check_cxx_consumer source_dir work prefix kind mpiexec)
  set(use_static OFF)
  if(kind STREQUAL "static")
    set(use_static ON)
  endif()
  set(b "${work}/cxx-${kind}")
  postbox_build_consumer("${source_dir}/examples/consumer" "${b}" "${prefix}" -Dpostbox_USE_STATIC_LIBS=${use_static})
  postbox_check_program("${b}/consumer" "^postbox [0-9]+\\.[0-9]+\\.[0-9]+")
  postbox_check_program("${b}/contract" "^contract: ")
  postbox_check_program("${b}/emulate" "^emulate: ")
  postbox_check_program("${b}/team_collectives" "right")
  postbox_check_program("${b}/barrier_omp" "every phase complete")
  if(kind STREQUAL "shared")
    postbox_check_loads("${b}/consumer" "${prefix}" "libpostbox_barrier\\.so" "libmpi")
  else()
    execute_process(COMMAND ldd "${b}/consumer" OUTPUT_VARIABLE out)
    if(out MATCHES "libpostbox_")
      message(FATAL_ERROR "with postbox_USE_STATIC_LIBS the consumer loads a postbox shared library:\n${out}")
    endif()
  endif()
  # postbox::cluster through the installed package, under mpirun (given MPIEXEC: built with MPI).
  if(mpiexec)
    if(NOT EXISTS "${b}/cluster")
      message(FATAL_ERROR "postbox was built with MPI but the package has no postbox::cluster")
    endif()
    set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
    set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
    execute_process(COMMAND "${mpiexec}" -n 2 --oversubscribe "${b}/cluster" RESULT_VARIABLE rc
      OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
    if(rc OR NOT out MATCHES "^cluster: p = 4 \\(2 x 2\\), allreduce verified")
      message(FATAL_ERROR "the cluster program failed: rc=${rc} out=${out} err=${err}")
    endif()
    message(STATUS "${out}")
  endif()
endfunction()

# examples/consumer-c: a project(x C) that asks for the barrier component only.
function(postbox_check_c_consumer source_dir work prefix)
  set(b "${work}/c-only")
  postbox_build_consumer("${source_dir}/examples/consumer-c" "${b}" "${prefix}")
  postbox_check_program("${b}/barrier_c" "^barrier_c: .*every phase complete")
  postbox_check_loads("${b}/barrier_c" "${prefix}" "libpostbox_barrier\\.so" "libmpi")
endfunction()

# A plain C program, compiled and linked with the C compiler and pkg-config alone (no CMake):
# cc barrier_c.c $(pkg-config --cflags --libs postbox-barrier), then the same with --static.
# Every component's .pc file must answer --cflags --libs.
function(postbox_check_pkg_config source_dir work prefix cc pkg_config components)
  file(GLOB_RECURSE pcs "${prefix}/*/postbox-barrier.pc")
  if(NOT pcs)
    message(FATAL_ERROR "the package has no postbox-barrier.pc")
  endif()
  list(GET pcs 0 pc)
  get_filename_component(pcdir "${pc}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pcdir}")
  string(REPLACE "," ";" components "${components}")
  foreach(c IN LISTS components)
    postbox_run("pkg-config --cflags --libs postbox-${c}" ${pkg_config} --cflags --libs postbox-${c})
  endforeach()
  foreach(kind shared static)
    set(static_flag "")
    set(exe "${work}/barrier_c_pc_${kind}")
    if(kind STREQUAL "static")
      set(static_flag --static)
    endif()
    execute_process(COMMAND ${pkg_config} ${static_flag} --cflags --libs postbox-barrier RESULT_VARIABLE rc
      OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc)
      message(FATAL_ERROR "pkg-config ${static_flag} --cflags --libs postbox-barrier failed: ${err}")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    if(kind STREQUAL "static")
      # libdir holds both libpostbox_*.a and .so, and -l picks the .so: name the archives.
      list(TRANSFORM flags REPLACE "^-lpostbox_(.+)$" "${pcdir}/../libpostbox_\\1.a")
    endif()
    # Outside the system's library directories the program is told where the libraries lie,
    # as docs/using.md says: -Wl,-rpath,$(pkg-config --variable=libdir postbox-barrier).
    execute_process(COMMAND ${pkg_config} --variable=libdir postbox-barrier OUTPUT_VARIABLE libdir
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    postbox_run("cc barrier_c.c $(pkg-config ${static_flag} --cflags --libs postbox-barrier)"
      ${cc} -std=c11 -Wall -Werror "${source_dir}/examples/consumer/barrier_c.c" ${flags} "-Wl,-rpath,${libdir}"
      -o "${exe}")
    postbox_check_program("${exe}" "^barrier_c: .*every phase complete")
  endforeach()
  # The same through a plain Makefile (examples/consumer-c/Makefile).
  find_program(MAKE_PROGRAM NAMES make gmake REQUIRED)
  postbox_run("make -f examples/consumer-c/Makefile" ${MAKE_PROGRAM} -s -f "${source_dir}/examples/consumer-c/Makefile"
    "OUT=${work}" "CC=${cc}" "PKG_CONFIG=${pkg_config}")
  postbox_check_program("${work}/barrier_c_make" "^barrier_c: .*every phase complete")
  postbox_check_loads("${work}/barrier_c_make" "${prefix}" "libpostbox_barrier\\.so" "libmpi")
  execute_process(COMMAND ldd "${work}/barrier_c_pc_static" OUTPUT_VARIABLE out)
  if(out MATCHES "libpostbox_")
    message(FATAL_ERROR "barrier_c linked with the archives loads a postbox shared library:\n${out}")
  endif()
  postbox_check_loads("${work}/barrier_c_pc_shared" "${prefix}" "libpostbox_barrier\\.so" "libmpi")
endfunction()
