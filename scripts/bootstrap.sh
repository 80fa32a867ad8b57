#!/usr/bin/env bash
# Installs what torchscope needs on a Debian 12 machine: system packages, a Python
# virtual environment (.venv) with the CPU build of torch, and the CUDA headers.
# Idempotent and quiet when everything is already there.
# Usage: bootstrap.sh [demo|all]: `demo` installs only what the demo builds and runs (no Qt, clang,
# browser, nor the validation suite's and benchmarks' Python packages); `all` (the default) everything
# the tests need.
set -euo pipefail
setup="${1:-all}"
[[ "$setup" == demo || "$setup" == all ]] || { echo "bootstrap: unknown set-up '$setup' (demo or all)" >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${TORCHSCOPE_VENV:-$root/.venv}"
log="$(mktemp -t torchscope-bootstrap.XXXXXX)"
trap 'rm -f "$log"' EXIT

say() { printf 'bootstrap: %s\n' "$*"; }
run_logged() { # runs a command quietly, shows its output only when it fails
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    say "failed: $*" >&2
    exit 1
  fi
}

apt_packages=(
  build-essential cmake ninja-build pkg-config ccache
  libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  zlib1g-dev
)
if [[ "$setup" == all ]]; then
  # The GUI (Qt 6), the sanitizer and fuzz builds (clang), the HTML report's browser test (chromium), the
  # format check on changed lines (clang-format).
  apt_packages+=(qt6-base-dev libgl-dev clang libclang-rt-14-dev clang-format chromium)
fi
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  sudo_cmd=""; [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  run_logged $sudo_cmd apt-get update -qq
  run_logged env DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ ! -x "$venv/bin/python" ]]; then
  say "creating $venv"
  run_logged python3 -m venv "$venv"
fi
py="$venv/bin/python"
# pip_install WHAT FILE STAMP IMPORTS...: installs FILE's packages (requirements.txt as constraints, so torch stays
# the CPU build) unless IMPORTS import and FILE is the one installed last (a copy kept as $venv/.torchscope-STAMP).
pip_install() {
  local what="$1" file="$2" stamp="$venv/.torchscope-$3"
  # Found, not imported: importing transformers and lightning took most of a no-op build's 18 s.
  if ! "$py" -c 'import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))' \
    "${@:4}" >/dev/null 2>&1 || ! cmp -s "$file" "$stamp"; then
    say "installing $what into $venv"
    if [[ "$file" == "$root/requirements.txt" ]]; then
      run_logged "$py" -m pip install -q -r "$file"
    else
      run_logged "$py" -m pip install -q -r "$file" -c "$root/requirements.txt"
    fi
    cp "$file" "$stamp"
  fi
}
# requirements.txt pins torch to the CPU 2.13 build; a plain `torch` would pull a CUDA build.
pip_install "Python packages" "$root/requirements.txt" requirements torch libcst torch_geometric
if [[ "$setup" == all ]]; then
  # The validation suite's third-party models (tests/validation).
  pip_install "the validation suite's packages" "$root/tests/validation/requirements.txt" validation-requirements \
    transformers torch_frame mambapy
  # The framework samples (samples/frameworks): Hugging Face Trainer, Lightning, accelerate, peft.
  pip_install "the framework samples' packages" "$root/samples/frameworks/requirements.txt" frameworks-requirements \
    transformers accelerate lightning peft
  # The benchmarks' distributed engine (bench/ranks_dask.py).
  pip_install "the benchmarks' packages" "$root/bench/requirements.txt" bench-requirements dask.distributed
fi

# CUPTI and NVTX headers: the CUDA toolkit when present, else NVIDIA's wheels.
if [[ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/cupti.h" ]]; then
  if ! "$py" -c "import nvidia.cuda_cupti" >/dev/null 2>&1; then
    say "no CUDA toolkit found; installing NVIDIA's CUDA header wheels"
    run_logged "$py" -m pip install -q nvidia-cuda-cupti-cu13 nvidia-cuda-runtime-cu13 nvidia-nvtx-cu13 \
      || run_logged "$py" -m pip install -q nvidia-cuda-cupti nvidia-cuda-runtime nvidia-nvtx
  fi
fi
