# cmake -P script: configures and builds the clang libFuzzer binaries in BUILD_DIR.
# Variables: FISKAI_SOURCE_DIR, BUILD_DIR, TARGETS_FILE, TARGETS (comma list), CLANGXX,
# LAUNCHER (may be empty), GENERATOR.
string(REPLACE "," ";" targets "${TARGETS}")
# UBSan's `function` check makes clang 14 fail on coroutine frames ("Cannot represent a
# difference across sections"); every other check stays on. The project's warning flags
# are g++'s, so clang is told not to complain about the ones it does not know.
set(flags "-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function \
-fno-sanitize-recover=undefined -Wno-unknown-warning-option")

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}")
  endif()
endfunction()

run(${CMAKE_COMMAND} -S ${FISKAI_SOURCE_DIR}/cmake/libfuzzer -B ${BUILD_DIR} -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CLANGXX} -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}
    "-DCMAKE_CXX_FLAGS=${flags}" "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined"
    -DFISKAI_SOURCE_DIR=${FISKAI_SOURCE_DIR} -DTARGETS_FILE=${TARGETS_FILE})
run(${CMAKE_COMMAND} --build ${BUILD_DIR} -j 2 --target ${targets})
