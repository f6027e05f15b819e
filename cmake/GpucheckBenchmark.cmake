# gpucheck_add_benchmark(NAME SOURCES a.cpp b.cu LIBS extra::lib COUNTERS TFLOPS ...):
# one family = one file and one line. Every binary links the shared harness (timing,
# context, main) and our kernels, and is registered as a CTest smoke run (label gpu) that
# runs its quick suite with --benchmark_out and checks the JSON (names, the listed counters
# present and positive, context filled). Without a device the run reports "Skipped".
function(gpucheck_add_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;COUNTERS;ARGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE gpucheck::harness_main gpucheck::harness gpucheck::kernels ${ARG_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  gpucheck_warnings(${name})
  set_property(GLOBAL APPEND PROPERTY GPUCHECK_BENCHMARKS ${name})
  if(GPUCHECK_BUILD_TESTS)
    string(REPLACE "bench_" "" family ${name})
    set(counter_args)
    foreach(c ${ARG_COUNTERS})
      list(APPEND counter_args --counter ${c})
    endforeach()
    add_test(NAME gpu.${name}.quick
             COMMAND bash ${PROJECT_SOURCE_DIR}/tests/gpu/run_smoke.sh $<TARGET_FILE:${name}>
                     $<TARGET_FILE:gpu_json_check> ${CMAKE_CURRENT_BINARY_DIR}/${name}.quick.json
                     --family ${family} ${counter_args} -- ${ARG_ARGS})
    set_tests_properties(gpu.${name}.quick PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
  endif()
endfunction()
