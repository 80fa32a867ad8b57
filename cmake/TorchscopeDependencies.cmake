# Finds every dependency once, and says in the configure output what was found.

# An optional part whose dependency is missing is off for this configure only: the option stays ON in the cache,
# so the next configure (after scripts/bootstrap.sh installed the rest) turns it on again. The parts turned off
# are listed in TORCHSCOPE_PARTS_OFF, which scripts/build.sh reads to know when to configure again.
set(TORCHSCOPE_PARTS_OFF "" CACHE INTERNAL "Optional parts turned off for a missing dependency")
macro(torchscope_turn_off option)
  set(${option} OFF)
  set(TORCHSCOPE_PARTS_OFF "${TORCHSCOPE_PARTS_OFF};${option}" CACHE INTERNAL "")
endmacro()

find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
torchscope_summary("SQLite ${SQLite3_VERSION}, nlohmann_json ${nlohmann_json_VERSION}, fmt ${fmt_VERSION}, CLI11 ${CLI11_VERSION}")

# The project's Python: the bootstrap venv when there is one.
if(NOT Python3_EXECUTABLE AND EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  set(Python3_EXECUTABLE "${PROJECT_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "Python used by tests and samples")
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)
torchscope_summary("Python: ${Python3_EXECUTABLE} (${Python3_VERSION})")

if(BUILD_TESTING)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  torchscope_summary("GoogleTest: ${GTest_VERSION}")
endif()

if(TORCHSCOPE_WITH_CUPTI)
  set(_cuda_hints "$ENV{CUDA_HOME}" /usr/local/cuda)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import nvidia.cuda_cupti, os; print(os.path.dirname(nvidia.cuda_cupti.__file__))"
    OUTPUT_VARIABLE _cupti_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  find_path(CUPTI_INCLUDE_DIR cupti.h
    HINTS ${_cuda_hints} ${_cupti_wheel}
    PATH_SUFFIXES include extras/CUPTI/include)
  find_path(CUDA_RUNTIME_INCLUDE_DIR cuda.h HINTS ${_cuda_hints} PATH_SUFFIXES include)
  find_path(NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${_cuda_hints} PATH_SUFFIXES include)
  if(CUPTI_INCLUDE_DIR AND CUDA_RUNTIME_INCLUDE_DIR AND NVTX_INCLUDE_DIR)
    torchscope_summary("CUPTI: ON (headers in ${CUPTI_INCLUDE_DIR}, libcupti is loaded at run time)")
  else()
    message(WARNING "CUPTI/CUDA/NVTX headers not found: GPU tracing is turned off")
    torchscope_turn_off(TORCHSCOPE_WITH_CUPTI)
    torchscope_summary("CUPTI: OFF (headers not found)")
  endif()
else()
  torchscope_summary("CUPTI: OFF (option)")
endif()

if(TORCHSCOPE_WITH_GUI)
  find_package(Qt6 COMPONENTS Widgets Test QUIET)
  if(Qt6_FOUND)
    torchscope_summary("GUI: ON (Qt ${Qt6_VERSION})")
  else()
    message(WARNING "Qt6 Widgets not found: the GUI is turned off")
    torchscope_turn_off(TORCHSCOPE_WITH_GUI)
    torchscope_summary("GUI: OFF (Qt6 not found)")
  endif()
else()
  torchscope_summary("GUI: OFF (option)")
endif()

if(TORCHSCOPE_WITH_LIBTORCH)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_torch_prefix)
    list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
    find_package(Torch QUIET)
  endif()
  if(Torch_FOUND)
    torchscope_summary("libtorch: ON (${_torch_prefix})")
  else()
    message(WARNING "libtorch not found through ${Python3_EXECUTABLE}: `optimize` is turned off")
    torchscope_turn_off(TORCHSCOPE_WITH_LIBTORCH)
    torchscope_summary("libtorch: OFF (torch not importable)")
  endif()
else()
  torchscope_summary("libtorch: OFF (option)")
endif()
