# The installed layout, the same under every prefix (`cmake --install`, a wheel, or the build tree):
#   bin/torchscope, bin/torchscope-gui, bin/torchscope-optimize
#   lib/libtorchscope_collector.so
#   share/torchscope/python     the collector's Python bridge (sitecustomize, torchscope_bridge, torchscope)
#   share/torchscope/compiler   the compiler's Python package (torchscope_compiler)
#   share/torchscope/samples    the demo's sample (samples/rdl_hm)
# Programs find each other and these folders relative to their own file, so a tree works wherever it is moved.
# The build tree gets the same share/torchscope, made of links to the sources (edits need no rebuild).
set(TORCHSCOPE_INSTALL_BINDIR bin)
set(TORCHSCOPE_INSTALL_LIBDIR lib)
set(TORCHSCOPE_INSTALL_DATADIR share/torchscope)

# The relative paths above, for the code that looks them up (the CLI and the collector).
add_library(torchscope_layout INTERFACE)
target_compile_definitions(torchscope_layout INTERFACE
  TORCHSCOPE_LAYOUT_BINDIR="${TORCHSCOPE_INSTALL_BINDIR}"
  TORCHSCOPE_LAYOUT_LIBDIR="${TORCHSCOPE_INSTALL_LIBDIR}"
  TORCHSCOPE_LAYOUT_DATADIR="${TORCHSCOPE_INSTALL_DATADIR}")

# Nothing the project installs links a library of its own: the collector is preloaded by path, and libtorch
# comes from the job's torch when `torchscope optimize` starts torchscope-optimize (LD_LIBRARY_PATH, cli/).
# So the installed files carry no RUNPATH at all, in particular none into the build's virtual environment.
set(CMAKE_INSTALL_RPATH "")
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH OFF)

# torchscope_install_python_tree(SOURCE <dir> DESTINATION <name under share/torchscope> [PATTERNS ...])
# Installs a folder of Python sources and links it into the build tree at the same place.
function(torchscope_install_python_tree)
  cmake_parse_arguments(ARG "" "SOURCE;DESTINATION" "PATTERNS" ${ARGN})
  if(NOT ARG_PATTERNS)
    set(ARG_PATTERNS "*.py")
  endif()
  set(_match)
  foreach(_pattern IN LISTS ARG_PATTERNS)
    list(APPEND _match PATTERN "${_pattern}")
  endforeach()
  install(DIRECTORY "${ARG_SOURCE}/" DESTINATION "${TORCHSCOPE_INSTALL_DATADIR}/${ARG_DESTINATION}"
    COMPONENT runtime FILES_MATCHING ${_match} PATTERN "__pycache__" EXCLUDE)
  set(_link "${PROJECT_BINARY_DIR}/${TORCHSCOPE_INSTALL_DATADIR}/${ARG_DESTINATION}")
  get_filename_component(_parent "${_link}" DIRECTORY)
  file(MAKE_DIRECTORY "${_parent}")
  file(CREATE_LINK "${ARG_SOURCE}" "${_link}" SYMBOLIC)
endfunction()
