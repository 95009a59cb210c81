# ctest (CUDA builds only): the lenlab of a CUDA-enabled build starts like a CPU-only one.
#   cmake -DPROGRAM=<lenlab> -DREADELF=<readelf> -DWORK=<scratch dir> -P no_cuda_at_startup.cmake
# cuBLAS (and libcublasLt, ~200 MB) is opened with dlopen only when a GPU is looked for
# (models/cuda/blas.hpp) and cudart is linked statically, so the program must not list any CUDA
# library among its NEEDED entries, and --version, --help, theory and a --device cpu run must not
# load one (checked with the dynamic loader's LD_DEBUG=libs log, where glibc writes one).
foreach(var PROGRAM READELF WORK)
  if(NOT ${var})
    message(FATAL_ERROR "no_cuda_at_startup.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND "${READELF}" -d "${PROGRAM}" OUTPUT_VARIABLE dynamic
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${READELF} -d ${PROGRAM} failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${dynamic}")
if(NOT needed MATCHES "libc\\.so")
  message(FATAL_ERROR "no NEEDED entries read from ${PROGRAM}:\n${dynamic}")
endif()
foreach(entry IN LISTS needed)
  if(entry MATCHES "\\[(libcublas|libcublasLt|libcudart|libcuda)\\.")
    message(FATAL_ERROR "${PROGRAM} links a CUDA library, which every CPU invocation would then "
                        "load: ${entry}\n(link cudart statically; cuBLAS is opened with dlopen)")
  endif()
endforeach()

file(MAKE_DIRECTORY "${WORK}")
# One command a line, arguments split at spaces; OUT stands for a scratch folder.
set(commands
    "--version"
    "--help"
    "theory --task length --l-train 4 --l-test 6"
    "train --device cpu --steps 2 --l-train 2 --l-test 3 --out OUT --overwrite")
foreach(shown IN LISTS commands)
  string(REPLACE " " ";" args "${shown}")
  list(TRANSFORM args REPLACE "^OUT$" "${WORK}/cpu_run")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env LD_DEBUG=libs "${PROGRAM}" ${args}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE log)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "lenlab ${shown} failed (${rc}):\n${log}")
  endif()
  if(NOT log MATCHES "find library=")
    message(STATUS "lenlab ${shown}: no LD_DEBUG log (not glibc?); run-time check not made")
  elseif(log MATCHES "find library=(libcublas|libcublasLt|libcudart|libcuda)[^\n]*")
    message(FATAL_ERROR "lenlab ${shown} loaded a CUDA library: ${CMAKE_MATCH_0}")
  endif()
endforeach()
message(STATUS "${PROGRAM}: no CUDA library among its NEEDED entries or loaded by a CPU invocation")
