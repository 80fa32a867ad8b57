#!/usr/bin/env bash
# Compiles the two parts of check 7 that link libtorch against the torch of PYTHON, into a bundle (bundle.sh):
# the collector's libtorch plugin (lib/libtorchscope_libtorch.so, beside the collector, where it looks for it) and
# samples/aoti_server (bin/aoti_server). The lent GPU machine has torch and a compiler but not the project's CMake
# dependencies, so this is the plugin's CMake target (collector/libtorch/CMakeLists.txt) written out for g++; the
# one header-only dependency, nlohmann-json, travels in the bundle (include/).
#   scripts/gpu_validation/build_libtorch_parts.sh PYTHON BUNDLE
set -euo pipefail
python=${1:?usage: build_libtorch_parts.sh PYTHON BUNDLE}
bundle=$(realpath "${2:?usage: build_libtorch_parts.sh PYTHON BUNDLE}")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
read -r torch_root abi cuda < <("$python" -c 'import os, torch
print(os.path.dirname(torch.__file__), int(torch.compiled_with_cxx11_abi()), int(torch.version.cuda is not None))')
lib=$torch_root/lib
common=(-std=c++20 -O2 -fPIC "-D_GLIBCXX_USE_CXX11_ABI=$abi" -isystem "$torch_root/include"
  -isystem "$torch_root/include/torch/csrc/api/include")
# libtorch_cuda registers CUDA with the dispatcher only when it is loaded: kept although no symbol of it is used.
torch_libs=(-L"$lib" "-Wl,-rpath,$lib" -Wl,--no-as-needed -ltorch -ltorch_cpu -lc10)
((cuda)) && [[ -f $lib/libtorch_cuda.so ]] && torch_libs+=(-ltorch_cuda -lc10_cuda)
torch_libs+=(-Wl,--as-needed)

g++ "${common[@]}" -shared -fvisibility=hidden -fvisibility-inlines-hidden -isystem "$bundle/include" \
  -I"$root/collector/libtorch/include" \
  "$root"/collector/libtorch/src/{CallRedirect,LibtorchRelease,Plugin,Requests}.cpp -L"$lib" "-Wl,-rpath,$lib" -ltorch_cpu -lc10 -ldl \
  -Wl,--exclude-libs,ALL -Wl,-z,defs -o "$bundle/lib/libtorchscope_libtorch.so" &
plugin=$!
g++ "${common[@]}" "$root/samples/aoti_server/server.cpp" "${torch_libs[@]}" -o "$bundle/bin/aoti_server" &
server=$!
status=0
wait $plugin || status=1
wait $server || status=1
exit $status
