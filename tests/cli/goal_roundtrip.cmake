# plan export --format goal --machine M, read back by sim --goal --machine M, gives the time_us
# that sim gives for the same plan, to the last digit.
#
#   cmake -DPOSTBOX=<postbox> -DDIR=<scratch dir> -P goal_roundtrip.cmake
#
# Each case is "MACHINE|plan options"; the options go to both sim and plan export.
cmake_minimum_required(VERSION 3.25)

set(cases
  "postal:2.5|--op bcast --algo binomial --p 13 --bytes 8"
  "postal:2.5|--op allreduce --algo postal --p 8 --bytes 8"
  "postal:2.5|--op bcast --algo fibo --p 20 --bytes 8"
  "postal:2.5|--op barrier --algo fibo --p 9 --bytes 0"
  "logp:3:1:2:0.01:0.002|--op allreduce --algo postal --p 8 --bytes 64"
  "logp:3:1:2:0.01:0.002|--op reduce --algo binomial --p 6 --bytes 64"
  "logp:3:1:2:0.01:0.002|--op all-to-all --algo 1-lev-dir --p 5 --bytes 16"
  "sr:1:1.5|--op bcast --algo lambda --p 17 --bytes 8"
  "delta|--op bcast --algo greedy --p 12 --bytes 64")

file(MAKE_DIRECTORY "${DIR}")
set(failed 0)
set(n 0)
foreach(c IN LISTS cases)
  string(FIND "${c}" "|" bar)
  string(SUBSTRING "${c}" 0 ${bar} machine)
  math(EXPR from "${bar} + 1")
  string(SUBSTRING "${c}" ${from} -1 opts)
  set(shown "${opts}")
  separate_arguments(opts UNIX_COMMAND "${opts}")
  set(goal "${DIR}/case${n}.goal")
  math(EXPR n "${n} + 1")
  execute_process(COMMAND ${POSTBOX} plan export ${opts} --machine ${machine} --format goal
    OUTPUT_FILE "${goal}" RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "plan export ${opts} --machine ${machine}: exit ${rc}: ${err}")
  endif()
  execute_process(COMMAND ${POSTBOX} sim --machine ${machine} ${opts} --json
    OUTPUT_VARIABLE direct RESULT_VARIABLE rc1 ERROR_VARIABLE err1)
  execute_process(COMMAND ${POSTBOX} sim --machine ${machine} --goal "${goal}" --json
    OUTPUT_VARIABLE viagoal RESULT_VARIABLE rc2 ERROR_VARIABLE err2)
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
    message(FATAL_ERROR "sim ${machine} ${opts}: exit ${rc1}/${rc2}: ${err1}${err2}")
  endif()
  string(JSON t1 GET "${direct}" time_us)
  string(JSON t2 GET "${viagoal}" time_us)
  string(JSON m1 GET "${direct}" messages)
  string(JSON m2 GET "${viagoal}" messages)
  if(NOT t1 STREQUAL t2 OR NOT m1 STREQUAL m2)
    message(SEND_ERROR "${machine} ${shown}: sim ${t1} us (${m1} messages), sim --goal of the export ${t2} us (${m2} messages)")
    set(failed 1)
  else()
    message(STATUS "${machine} ${shown}: ${t1} us both ways")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "GOAL round trip differs")
endif()
