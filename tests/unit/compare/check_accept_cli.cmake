# Runs the built gpucheck binary's `accept --results` as a fleet would: on the H200's real
# results (exit 0), on copies of the accept-suite fixture edited to a Gen4 link, an x8 link, a
# hw_slowdown reason and a second GPU 15% low (exit 1, the GPU and the check named), and on
# bad input (exit 2, one stderr line naming the file). The working folder is the build's, so
# specs and floors come from the source tree's baselines/.
# Usage: cmake -DGPUCHECK=.. -DSOURCE=.. -DFIXTURES=.. -DWORK=.. -P check_accept_cli.cmake
set(failures 0)

function(expect want)  # expect(STATUS [STDOUT_SUBSTRING] -- args...)
  cmake_parse_arguments(E "" "OUT" "ARGS" ${ARGN})
  execute_process(COMMAND ${GPUCHECK} accept ${E_ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  set(ok TRUE)
  if(NOT "${rc}" STREQUAL "${want}")
    set(ok FALSE)
  endif()
  if(E_OUT)
    string(FIND "${out}" "${E_OUT}" at)
    if(at EQUAL -1)
      set(ok FALSE)
    endif()
  endif()
  if(want EQUAL 2)
    string(REGEX MATCHALL "\n" nl "${err}")
    list(LENGTH nl n_lines)
    if(NOT n_lines EQUAL 1 OR NOT "${out}" STREQUAL "")
      set(ok FALSE)
    endif()
  endif()
  if(NOT ok)
    message(SEND_ERROR "gpucheck accept ${E_ARGS}: exit ${rc}, expected ${want} and \"${E_OUT}\"\n${out}${err}")
    math(EXPR failures "${failures} + 1")
    set(failures ${failures} PARENT_SCOPE)
  else()
    message(STATUS "exit ${rc}: accept ${E_ARGS}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/empty)
set(fixture ${FIXTURES}/accept/h200_gpu0.json)
file(READ ${fixture} healthy)

# Real results: the quick suite's baseline and the accept suite's shape of the same run.
expect(0 OUT "accept: PASS" ARGS --results ${SOURCE}/baselines/nvidia-h200/quick.json)
expect(0 OUT "pcie_link                            Gen5 x16" ARGS --results ${FIXTURES}/accept --out ${WORK}/verdict)
foreach(f accept.json accept.md)
  if(NOT EXISTS ${WORK}/verdict/${f})
    message(SEND_ERROR "--out wrote no ${f}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()

# One edit each: the sick boxes.
function(sick name from to)
  string(REPLACE "${from}" "${to}" text "${healthy}")
  if(text STREQUAL healthy)
    message(FATAL_ERROR "${name}: \"${from}\" is not in ${fixture}")
  endif()
  file(WRITE ${WORK}/${name}/gpu0.json "${text}")
endfunction()
sick(gen4 "\"pcie_gen_load\": 5" "\"pcie_gen_load\": 4")
expect(1 OUT "GPU 0 0000:00:06.0: pcie_link: PCIe Gen4 x16, expected Gen5 x16" ARGS --results ${WORK}/gen4)
sick(x8 "\"pcie_width_load\": 16" "\"pcie_width_load\": 8")
expect(1 OUT "GPU 0 0000:00:06.0: pcie_link: PCIe Gen5 x8, expected Gen5 x16" ARGS --results ${WORK}/x8)
sick(throttle "\"throttle_reasons\": \"none\"" "\"throttle_reasons\": \"hw_slowdown\"")
expect(1 OUT "GPU 0 0000:00:06.0: clocks: hw_slowdown" ARGS --results ${WORK}/throttle)

# Two GPUs of one node, the second 15% slower in bf16.
file(WRITE ${WORK}/pair/gpu0.json "${healthy}")
string(REPLACE "c83ef7c79831" "c83ef7c79832" gpu1 "${healthy}")
string(REPLACE "\"gpucheck_device_index\": \"0\"" "\"gpucheck_device_index\": \"1\"" gpu1 "${gpu1}")
string(REPLACE "0000:00:06.0" "0000:00:07.0" gpu1 "${gpu1}")
string(REPLACE "\"TFLOPS\": 800.4029602845602" "\"TFLOPS\": 680.34" gpu1 "${gpu1}")
file(WRITE ${WORK}/pair/gpu1/bench_matmul.json "${gpu1}")
expect(1 OUT "GPU 1 0000:00:07.0: alike gemm bf16: outlier: gemm bf16 680.3 TFLOP/s is 15% below" ARGS --results ${WORK}/pair)
expect(0 ARGS --results ${WORK}/pair --devices 0)

# Bad input: one line, exit 2.
expect(2 ARGS --results ${FIXTURES}/malformed/truncated.json)
expect(2 ARGS --results ${WORK}/empty)
expect(2 ARGS --results ${WORK}/does_not_exist)
# The measuring run with binaries that are not there (a GPU machine would measure with the real ones).
expect(2 ARGS --bin-dir ${WORK}/does_not_exist)

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} check(s) failed")
endif()
message(STATUS "accept: real results pass; Gen4, x8, hw_slowdown and a GPU 15% low fail; bad input exits 2")
