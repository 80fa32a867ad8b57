# Sourced by build.sh and sanitize.sh: compile through ccache when it is installed (bootstrap.sh
# installs it). Paths are hashed relative to the checkout, so a fresh clone elsewhere on the same
# machine (a CI run) reuses the objects of the previous one. Settings already exported win.
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER="${CMAKE_C_COMPILER_LAUNCHER:-ccache}"
  export CMAKE_CXX_COMPILER_LAUNCHER="${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}"
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi
