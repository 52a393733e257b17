# Fuzz targets. Each target is one source defining LLVMFuzzerTestOneInput, built twice:
#  - with the build's own compiler and the driver in tests/support/fuzz_driver.cpp, as
#    test <test name>: it runs the seed corpora, then random mutations of them for a bounded
#    time. Under the sanitizer preset (the CI build) the target and the libraries it links
#    are all compiled with AddressSanitizer and UndefinedBehaviorSanitizer.
#  - with clang and real libFuzzer, coverage-guided, as test <test name>.libfuzzer. clang builds
#    the libraries it needs itself, in a nested build (cmake/libfuzzer) set up by the
#    fixture test libfuzzer.build, so the rest of the build stays on one compiler.

set(FISKAI_FUZZ_SECONDS 20 CACHE STRING "How long each driver-based fuzz test mutates its corpus")
set(FISKAI_LIBFUZZER_SECONDS 25 CACHE STRING "How long each libFuzzer test runs")
option(FISKAI_LIBFUZZER_ALL "Build the LIBFUZZER_OPTIONAL fuzz targets under libFuzzer too" OFF)
find_program(FISKAI_CLANGXX NAMES clang++-14 clang++)

# fiskai_add_fuzz_test(<target> TEST <test name> SOURCE <file> DEPS <targets...>
#                      SEEDS <files or dirs...> [DICT <file>] [LABELS <labels...>] [LIBFUZZER_OPTIONAL])
# LIBFUZZER_OPTIONAL keeps a target out of the clang build unless FISKAI_LIBFUZZER_ALL is on:
# for one whose libraries clang would otherwise compile a second time (the four such targets
# take the nested build from about 4 to over 10 minutes on two cores with a cold cache). The
# mutation-driver test always runs.
function(fiskai_add_fuzz_test name)
  cmake_parse_arguments(ARG "LIBFUZZER_OPTIONAL" "TEST;SOURCE;DICT" "DEPS;SEEDS;LABELS" ${ARGN})
  get_filename_component(source ${ARG_SOURCE} ABSOLUTE)
  set(dict_args "")
  if(ARG_DICT)
    get_filename_component(dict ${ARG_DICT} ABSOLUTE)
    set(dict_args --dict ${dict})
  endif()
  set(seeds "")
  foreach(seed IN LISTS ARG_SEEDS)
    get_filename_component(seed ${seed} ABSOLUTE)
    list(APPEND seeds ${seed})
  endforeach()

  add_executable(${name} ${source} ${PROJECT_SOURCE_DIR}/tests/support/fuzz_driver.cpp)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} fiskai_warnings)
  add_test(NAME ${ARG_TEST} COMMAND ${name} --seconds ${FISKAI_FUZZ_SECONDS} ${dict_args} ${seeds})
  set_tests_properties(${ARG_TEST} PROPERTIES LABELS "${ARG_LABELS};fuzz" TIMEOUT 300)

  if(FISKAI_CLANGXX AND (FISKAI_LIBFUZZER_ALL OR NOT ARG_LIBFUZZER_OPTIONAL))
    # name|source|deps joined by commas: read by cmake/libfuzzer/CMakeLists.txt.
    string(REPLACE ";" "," deps "${ARG_DEPS}")
    set_property(GLOBAL APPEND PROPERTY FISKAI_LIBFUZZER_TARGETS "${name}|${source}|${deps}")
    add_test(NAME ${ARG_TEST}.libfuzzer
      COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/libfuzzer/run.sh ${PROJECT_BINARY_DIR}/libfuzzer/${name}
              ${FISKAI_LIBFUZZER_SECONDS} "${dict}" ${seeds})
    set_tests_properties(${ARG_TEST}.libfuzzer PROPERTIES LABELS "${ARG_LABELS};fuzz" TIMEOUT 300
      FIXTURES_REQUIRED fiskai_libfuzzer)
  endif()
endfunction()

# Called once, after every fuzz target is declared: the fixture that configures and builds
# the clang libFuzzer binaries.
function(fiskai_add_libfuzzer_build)
  get_property(targets GLOBAL PROPERTY FISKAI_LIBFUZZER_TARGETS)
  if(NOT FISKAI_CLANGXX OR NOT targets)
    return()
  endif()
  set(list_file ${PROJECT_BINARY_DIR}/libfuzzer/targets.txt)
  string(REPLACE ";" "\n" content "${targets}")
  file(CONFIGURE OUTPUT ${list_file} CONTENT "${content}\n")
  set(names "")
  foreach(entry IN LISTS targets)
    string(REPLACE "|" ";" fields "${entry}")
    list(GET fields 0 target)
    list(APPEND names ${target})
  endforeach()
  string(REPLACE ";" "," names "${names}")
  add_test(NAME libfuzzer.build
    COMMAND ${CMAKE_COMMAND}
      -DFISKAI_SOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DBUILD_DIR=${PROJECT_BINARY_DIR}/libfuzzer
      -DTARGETS_FILE=${list_file}
      -DTARGETS=${names}
      -DCLANGXX=${FISKAI_CLANGXX}
      -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
      -DGENERATOR=${CMAKE_GENERATOR}
      -P ${PROJECT_SOURCE_DIR}/cmake/libfuzzer/build.cmake)
  # Two compile jobs: CTest counts them against its own parallelism.
  set_tests_properties(libfuzzer.build PROPERTIES LABELS fuzz TIMEOUT 1200 PROCESSORS 2
    FIXTURES_SETUP fiskai_libfuzzer)
endfunction()
