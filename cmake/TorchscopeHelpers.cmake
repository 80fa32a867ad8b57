# Helpers every module uses, so that libraries, executables and tests are declared one way.

set(TORCHSCOPE_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
    -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough)
# GCC 12 at -O3 (Release) warns about standard-library code it inlined on paths that cannot run: std::string
# concatenations as overlapping copies of about 2^63 bytes (-Wrestrict, GCC bug 105329) and a vector shrunk by
# resize() as written out of bounds (-Warray-bounds, GCC bug 107852), both fixed in GCC 13. With -Werror no
# Release build would pass; the dev build (-O2) keeps both warnings.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND TORCHSCOPE_WARNINGS $<$<CONFIG:Release>:-Wno-restrict> $<$<CONFIG:Release>:-Wno-array-bounds>)
endif()

# Unity batches for a module's library or executable (TORCHSCOPE_UNITY_BUILD). Tests stay one file a unit.
# Sources in one batch share one translation unit: names in anonymous namespaces must differ between the files
# of a module.
function(torchscope_set_unity target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${TORCHSCOPE_UNITY_BUILD} UNITY_BUILD_BATCH_SIZE 8)
endfunction()

function(torchscope_set_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${TORCHSCOPE_WARNINGS}>)
  if(TORCHSCOPE_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()

# torchscope_add_library(NAME <target> [SHARED] SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# A module library: public headers in <module>/include, implementation in <module>/src.
function(torchscope_add_library)
  cmake_parse_arguments(ARG "SHARED" "NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  if(ARG_SHARED)
    add_library(${ARG_NAME} SHARED ${ARG_SOURCES})
  else()
    add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  endif()
  target_include_directories(${ARG_NAME}
    PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  torchscope_set_warnings(${ARG_NAME})
  torchscope_set_unity(${ARG_NAME})
endfunction()

# Where tests find the sources, the build, the corpus of real logs and traces (tests/corpus) and the project's Python.
function(torchscope_test_definitions target)
  target_compile_definitions(${target} PRIVATE
    TORCHSCOPE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    TORCHSCOPE_BINARY_DIR="${PROJECT_BINARY_DIR}"
    TORCHSCOPE_CORPUS_DIR="${PROJECT_SOURCE_DIR}/tests/corpus"
    TORCHSCOPE_PYTHON="${Python3_EXECUTABLE}")
endfunction()

# torchscope_add_test(NAME <name> SOURCES ... [DEPS ...] [LABELS ...] [TIMEOUT s])
# One GoogleTest executable, linked with tests/support (torchscope_test_support); every TEST in it becomes a ctest
# entry. SERIAL: its tests run alone (jobs that start several processes of their own and would otherwise share the
# machine's cores with other tests).
function(torchscope_add_test)
  cmake_parse_arguments(ARG "SERIAL" "NAME;TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} torchscope_test_support GTest::gtest GTest::gmock
    GTest::gtest_main)
  torchscope_test_definitions(${ARG_NAME})
  torchscope_set_warnings(${ARG_NAME})
  gtest_discover_tests(${ARG_NAME}
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}" RUN_SERIAL ${ARG_SERIAL}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endfunction()

# torchscope_add_fuzz_test(NAME <libFuzzer target> CORPUS <dir>... [ARGS ...] [LABELS ...] [TIMEOUT s])
# A ctest that runs every file of the corpus directories once (the regression corpus kept in the
# repository: crash reproducers and the minimised campaign corpus), then the fixed number of runs
# in ARGS. The files go in as -seed_inputs, so that libFuzzer writes nothing into the repository.
function(torchscope_add_fuzz_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "CORPUS;ARGS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set(_files "")
  foreach(_dir IN LISTS ARG_CORPUS)
    file(GLOB _found CONFIGURE_DEPENDS ${_dir}/*)
    list(APPEND _files ${_found})
  endforeach()
  set(_seeds "")
  if(_files)
    list(JOIN _files "," _joined)
    set(_seeds -seed_inputs=${_joined})
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME} ${ARG_ARGS} ${_seeds})
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "fuzz;${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()

set_property(GLOBAL PROPERTY TORCHSCOPE_SUMMARY "")
function(torchscope_summary line)
  set_property(GLOBAL APPEND PROPERTY TORCHSCOPE_SUMMARY "${line}")
endfunction()

function(torchscope_print_summary)
  get_property(lines GLOBAL PROPERTY TORCHSCOPE_SUMMARY)
  message(STATUS "torchscope ${PROJECT_VERSION} configuration:")
  foreach(line IN LISTS lines)
    message(STATUS "  ${line}")
  endforeach()
endfunction()
