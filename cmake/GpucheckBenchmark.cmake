# gpucheck_add_benchmark(NAME SOURCES a.cpp b.cu LIBS extra::lib COUNTERS TFLOPS ...
#                        CONTEXT cublas_version ...):
# one family = one file and one line. Every binary has the harness's one main() (the family
# file declares harness::family()), links the shared harness (engine, context, run_family)
# and our kernels, is listed in bin/gpucheck-benchmarks.txt (what `gpucheck gate`
# runs), and is registered as a CTest smoke run (label gpu) that runs its quick suite with
# --benchmark_out and checks the JSON (names, the listed counters present and positive, the
# listed context keys known, the device context's values plausible, and the figures against
# ranges a broken measurement cannot meet: tests/gpu/smoke_ranges.hpp, with the specs.json
# that travels with the build). Without a device the run
# reports "Skipped" (a failure when GPUCHECK_REQUIRE_GPU=1).
function(gpucheck_add_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;COUNTERS;CONTEXT;ARGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES} $<TARGET_OBJECTS:gpucheck_bench_main>)
  target_link_libraries(${name} PRIVATE gpucheck::harness gpucheck::kernels ${ARG_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  gpucheck_warnings(${name})
  set_property(GLOBAL APPEND PROPERTY GPUCHECK_BENCHMARKS ${name})
  if(GPUCHECK_BUILD_TESTS)
    string(REPLACE "bench_" "" family ${name})
    set(check_args)
    foreach(c ${ARG_COUNTERS})
      list(APPEND check_args --counter ${c})
    endforeach()
    foreach(c ${ARG_CONTEXT})
      list(APPEND check_args --context ${c})
    endforeach()
    add_test(NAME gpu.${name}.quick
             COMMAND bash ${PROJECT_SOURCE_DIR}/tests/gpu/run_smoke.sh $<TARGET_FILE:${name}>
                     $<TARGET_FILE:gpu_json_check> ${CMAKE_CURRENT_BINARY_DIR}/${name}.quick.json
                     --family ${family} --specs ${PROJECT_BINARY_DIR}/share/gpucheck/specs.json ${check_args}
                     -- ${ARG_ARGS})
    set_tests_properties(gpu.${name}.quick PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
  endif()
endfunction()

# bin/gpucheck-benchmarks.txt: the one list of benchmark binaries, read by `gpucheck gate`
# and `gpucheck accept` (a renamed or missing family is then an error there, not a smaller
# suite). Call once, after every family is added.
function(gpucheck_write_benchmark_list)
  get_property(names GLOBAL PROPERTY GPUCHECK_BENCHMARKS)
  list(JOIN names "\n" text)
  file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/bin/gpucheck-benchmarks.txt CONTENT "${text}\n")
endfunction()
