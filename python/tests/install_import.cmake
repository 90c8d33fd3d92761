# python.install: installs the python/ directory's rules into a scratch prefix and imports the
# installed package there (PYTHONPATH = PREFIX/INSTALL_DIR, as dist-packages is on Debian's
# python3 path under /usr), checking that the package came from the prefix and works.
#   cmake -DPREFIX=... -DINSTALL_SCRIPT=.../cmake_install.cmake -DPYTHON=... -DINSTALL_DIR=... -P install_import.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} -DCMAKE_INSTALL_PREFIX=${PREFIX} -P ${INSTALL_SCRIPT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed (${rc}):\n${out}")
endif()
set(_code "import postbox\nassert postbox.__file__.startswith('${PREFIX}/'), postbox.__file__\n"
          "t = postbox.tree('fibo', p=64, s=1, r=3)\nassert t.completion == 15, t.completion\nprint(postbox.__file__)\n")
string(CONCAT _code ${_code})
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PREFIX}/${INSTALL_DIR} ${PYTHON} -c "${_code}"
  WORKING_DIRECTORY ${PREFIX}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "import of the installed package failed (${rc}):\n${out}${err}")
endif()
message(STATUS "imported ${out}")
