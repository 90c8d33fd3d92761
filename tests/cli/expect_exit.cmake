# Runs a command and checks how it ended. Reusable by every CLI test:
#
#   cmake -DEXPECTED=<exit code> [-DSTDERR_LINES=<n>] [-DSTDERR_REGEX=<re>] [-DSTDOUT_REGEX=<re>]
#         -P expect_exit.cmake -- <command> [args...]
#
# EXPECTED      the exact exit code (required; a signal or a different code fails).
# STDERR_LINES  when given, stderr must be exactly that many newline-terminated lines.
# STDERR_REGEX  when given, stderr must match it (CMake regex; '.' also matches a newline).
# STDOUT_REGEX  when given, stdout must match it.
cmake_minimum_required(VERSION 3.25)

set(cmd "")
set(seen_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(seen_separator)
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(seen_separator TRUE)
  endif()
endforeach()
if(NOT cmd)
  message(FATAL_ERROR "expect_exit.cmake: no command after '--'")
endif()
if(NOT DEFINED EXPECTED)
  message(FATAL_ERROR "expect_exit.cmake: -DEXPECTED=<exit code> is required")
endif()

execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(JOIN " " shown ${cmd})
set(report "command: ${shown}\nexit: ${rc}\nstdout:\n${out}\nstderr:\n${err}")

if(NOT rc STREQUAL EXPECTED)
  message(FATAL_ERROR "expected exit code ${EXPECTED}\n${report}")
endif()
if(DEFINED STDERR_LINES)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines n)
  string(LENGTH "${err}" len)
  if(len GREATER 0)
    math(EXPR at "${len} - 1")
    string(SUBSTRING "${err}" ${at} 1 tail)
  else()
    set(tail "\n")
  endif()
  if(NOT n EQUAL STDERR_LINES OR NOT tail STREQUAL "\n")
    message(FATAL_ERROR "expected ${STDERR_LINES} line(s) on stderr, got ${n}\n${report}")
  endif()
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "stderr does not match '${STDERR_REGEX}'\n${report}")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "stdout does not match '${STDOUT_REGEX}'\n${report}")
endif()
