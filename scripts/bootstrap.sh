# Sourced by run.sh, test.sh and bench.sh: installs what opcheck needs, finds the torch to build against, then
# configures and builds.
# Usage: opcheck_bootstrap [extra Debian packages...]
#
# The torch: the active Python environment's (VIRTUAL_ENV or CONDA_PREFIX) when it has torch 2.7 or newer; otherwise
# a project-local virtual environment, .venv/, holding the pinned torch of scripts/requirements.txt. OPCHECK_PYTHON
# names another interpreter whose torch to use. The build records which one it was built against
# (`opcheck --version`), and is configured anew when the torch changes: another torch, not the same one reached by
# another path (a symlink, a bind mount).

# The checkout's physical path (symlinks resolved), so that one reached through a symlink configures against one path.
OPCHECK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
OPCHECK_BUILD_DIR="${OPCHECK_BUILD_DIR:-$OPCHECK_ROOT/build}"
OPCHECK_VENV="${OPCHECK_VENV:-$OPCHECK_ROOT/.venv}"
OPCHECK_BUILD_PACKAGES=(cmake g++ make pkg-config ninja-build ccache libcli11-dev nlohmann-json3-dev
  libspdlog-dev libpugixml-dev libyaml-dev libyaml-cpp-dev libgtest-dev python3 python3-venv)
OPCHECK_MIN_TORCH="2.7"

opcheck_log() { printf '[opcheck] %s\n' "$*" >&2; }

# A package is present when dpkg has it installed, or, for tools named `cmd:package`, when the command exists
# (a machine may carry node/npm from elsewhere, which Debian's npm package would conflict with).
opcheck_install_packages() {
  local missing=() p
  for p in "$@"; do
    if [[ "$p" == *:* ]]; then
      command -v "${p%%:*}" >/dev/null 2>&1 || missing+=("${p#*:}")
      continue
    fi
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  # What each is for, where the caller says (scripts/test.sh's OPCHECK_PACKAGE_WHY), before anything is installed.
  if declare -p OPCHECK_PACKAGE_WHY >/dev/null 2>&1; then
    opcheck_log "the tests need these Debian packages, which are missing:"
    for p in "${missing[@]}"; do opcheck_log "  $p: ${OPCHECK_PACKAGE_WHY[$p]:-the build}"; done
  fi
  if [ "$(id -u)" -ne 0 ]; then
    opcheck_log "missing Debian packages; install them with:"
    echo "sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  opcheck_log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# Prints "VERSION CMAKE_PREFIX" of the torch that interpreter $1 imports, or fails; what the import printed on its
# stderr goes to the file $OPCHECK_TORCH_ERR (default: nowhere).
opcheck_torch_of() {
  "$1" - <<'EOF' 2>"${OPCHECK_TORCH_ERR:-/dev/null}"
import warnings
warnings.simplefilter("ignore")
import torch, torch.utils
print(torch.__version__.split("+")[0], torch.utils.cmake_prefix_path)
EOF
}

# Whether interpreter $1 has torch at all: `import torch` also loads the backends installed as torch.backends entry
# points (torch's autoload), and a broken one must not make an environment that has torch look like one without.
opcheck_has_torch() { TORCH_DEVICE_BACKEND_AUTOLOAD=0 opcheck_torch_of "$1" >/dev/null; }

# Sets `out` to "VERSION CMAKE_PREFIX" of interpreter $1's torch ($2 says where it came from), or fails saying why
# with the real error: the last lines `import torch` printed. When torch itself imports and only an installed
# backend's autoload fails, that error is reported and the build goes on (it needs torch, not the backend); `opcheck
# run` reports it again, with its Fix, when it starts the device.
opcheck_torch_or_why() {
  local py="$1" where="$2" errfile
  errfile="$(mktemp)"
  if out="$(OPCHECK_TORCH_ERR="$errfile" opcheck_torch_of "$py")"; then
    rm -f "$errfile"
    return 0
  fi
  if out="$(TORCH_DEVICE_BACKEND_AUTOLOAD=0 opcheck_torch_of "$py")"; then
    opcheck_log "$py (from $where): \`import torch\` fails while loading a backend installed as a torch.backends entry point:"
    tail -n 12 "$errfile" | sed 's/^/[opcheck]   /' >&2
    opcheck_log "torch ${out%% *} itself imports (TORCH_DEVICE_BACKEND_AUTOLOAD=0), so opcheck builds against it; runs that"
    opcheck_log "start Python fail the same way until the backend is repaired or TORCH_DEVICE_BACKEND_AUTOLOAD=0 is set."
    rm -f "$errfile"
    return 0
  fi
  opcheck_log "$py (from $where) cannot import torch:"
  tail -n 12 "$errfile" | sed 's/^/[opcheck]   /' >&2
  if grep -q "No module named 'torch'" "$errfile"; then
    opcheck_log "Fix: install torch there (pip install torch==2.13.0), or unset OPCHECK_PYTHON/deactivate the environment."
  else
    opcheck_log "Fix: make \`$py -c 'import torch'\` succeed (the error above), or unset OPCHECK_PYTHON/deactivate the environment."
  fi
  rm -f "$errfile"
  return 1
}

# True when version $1 >= version $2 (dotted numbers).
opcheck_version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# Sets OPCHECK_PYTHON (the interpreter whose torch opcheck builds against and the Python tests run under),
# OPCHECK_TORCH_VERSION and OPCHECK_TORCH_CMAKE_PREFIX. $1 = 1 also installs the test requirements.
opcheck_python_env() {
  local with_tests="${1:-0}" py="" where="" out
  if [ -n "${OPCHECK_PYTHON:-}" ]; then
    py="$OPCHECK_PYTHON"; where="OPCHECK_PYTHON"
  elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ] && opcheck_has_torch "$VIRTUAL_ENV/bin/python"; then
    py="$VIRTUAL_ENV/bin/python"; where="the active virtual environment"
  elif [ -n "${CONDA_PREFIX:-}" ] && [ -x "$CONDA_PREFIX/bin/python" ] && opcheck_has_torch "$CONDA_PREFIX/bin/python"; then
    py="$CONDA_PREFIX/bin/python"; where="the active conda environment"
  else
    py="$OPCHECK_VENV/bin/python"; where="the project's virtual environment ($OPCHECK_VENV)"
    if [ ! -x "$py" ]; then
      opcheck_log "creating $OPCHECK_VENV"
      # The interpreter on PATH (the one pip's wheel cache suits), else Debian's.
      local base
      base="$(command -v python3 || echo /usr/bin/python3)"
      "$base" -m venv "$OPCHECK_VENV" >&2 || { rm -rf "$OPCHECK_VENV"; return 1; }
    fi
    if ! opcheck_has_torch "$py"; then
      opcheck_log "installing the pinned torch into $OPCHECK_VENV (scripts/requirements.txt)"
      "$py" -m pip install -q -r "$OPCHECK_ROOT/scripts/requirements.txt" >&2 || return 1
    fi
    # Module cases build transformers layers: the project's own environment has the pinned transformers (another
    # environment brings its own; a module case without it says which to install).
    if ! "$py" -c 'import transformers' 2>/dev/null; then
      opcheck_log "installing transformers for module cases into $OPCHECK_VENV (scripts/requirements-modules.txt)"
      "$py" -m pip install -q -r "$OPCHECK_ROOT/scripts/requirements-modules.txt" >&2 || return 1
    fi
  fi
  opcheck_torch_or_why "$py" "$where" || return 1
  OPCHECK_TORCH_VERSION="${out%% *}"
  OPCHECK_TORCH_CMAKE_PREFIX="${out#* }"
  if ! opcheck_version_at_least "$OPCHECK_TORCH_VERSION" "$OPCHECK_MIN_TORCH"; then
    opcheck_log "torch $OPCHECK_TORCH_VERSION from $where is older than $OPCHECK_MIN_TORCH, the oldest opcheck builds against."
    opcheck_log "Fix: pip install torch==2.13.0 in that environment, or deactivate it to use the project's own."
    return 1
  fi
  if [ "$with_tests" = 1 ] && ! "$py" -c 'import pytest, yaml, numpy, expecttest, check_jsonschema, kubernetes_validate, transformers' 2>/dev/null; then
    opcheck_log "installing the test requirements (scripts/requirements-test.txt)"
    "$py" -m pip install -q -r "$OPCHECK_ROOT/scripts/requirements-test.txt" >&2 || return 1
  fi
  OPCHECK_PYTHON="$py"
  export OPCHECK_PYTHON
  opcheck_log "torch $OPCHECK_TORCH_VERSION from $where"
}

# True when paths $1 and $2 name the same folder: the same text, or the same device and inode (`-ef` follows
# symlinks, and a bind mount shows its source's device and inode). A folder that no longer exists is the same only as
# the same text.
opcheck_same_dir() { [ "$1" = "$2" ] || [ "$1" -ef "$2" ]; }

# Configures build folder $1 when it is new, or was configured for another torch or another checkout (the same
# folder reached by another path is not another); extra args go to cmake.
opcheck_configure() {
  local dir="$1"; shift
  local gen=() cached="" home=""
  if [ -f "$dir/CMakeCache.txt" ]; then
    cached="$(sed -n 's/^OPCHECK_TORCH_CMAKE_PREFIX:[A-Z]*=//p' "$dir/CMakeCache.txt")"
    home="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$dir/CMakeCache.txt")"
    if ! opcheck_same_dir "$cached" "$OPCHECK_TORCH_CMAKE_PREFIX"; then
      opcheck_log "$dir was configured for another torch (${cached:-unknown}); configuring it anew"
      rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    elif ! opcheck_same_dir "$home" "$OPCHECK_ROOT"; then
      # cmake refuses a cache made for other sources; building it would build that other checkout.
      opcheck_log "$dir was configured for another checkout (${home:-unknown}); configuring it anew"
      rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    fi
  fi
  [ -f "$dir/CMakeCache.txt" ] && return 0
  command -v ninja >/dev/null && gen=(-G Ninja)
  opcheck_log "configuring $dir"
  cmake -S "$OPCHECK_ROOT" -B "$dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DOPCHECK_TORCH_CMAKE_PREFIX="$OPCHECK_TORCH_CMAKE_PREFIX" -DOPCHECK_PYTHON="$OPCHECK_PYTHON" \
    -DOPCHECK_WERROR="$([ "${OPCHECK_WERROR:-0}" = 1 ] && echo ON || echo OFF)" "$@" >&2
}

# Builds build folder $1 (incrementally); extra args go to `cmake --build` (e.g. --target NAME...).
opcheck_compile() {
  local dir="$1"; shift
  opcheck_log "building $dir (incremental)"
  local start=$SECONDS
  cmake --build "$dir" -j "$(nproc)" "$@" >&2 || return 1
  opcheck_log "build took $((SECONDS - start)) s"
}

# What `opcheck run` needs of build folder $1, those targets it has: the binary, the exec layer it loads, the
# loopback device, and the Python host with pyloop's extension module and their Python files (absent when the build
# found no libpython, and the libtorch ones when it was configured with -DOPCHECK_BUILD_EXEC=OFF). Not the tests.
opcheck_run_targets() {
  local dir="$1" all t out=()
  if [ -f "$dir/build.ninja" ]; then
    all="$(ninja -C "$dir" -t targets all 2>/dev/null | sed -n 's/^\([^:]*\): .*/\1/p')"
  else
    all="$(cmake --build "$dir" --target help 2>/dev/null | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')"
  fi
  for t in opcheck opcheck_exec opcheck_loopback opcheck_pyhost opcheck_pyloop_device opcheck_python_files; do
    grep -qx -- "$t" <<<"$all" && out+=("$t")
  done
  [ ${#out[@]} -gt 0 ] || out=(opcheck)
  printf '%s\n' "${out[@]}"
}

# $1 = all: everything (tests included, what scripts/test.sh runs); run: what `opcheck run` needs.
opcheck_build() {
  opcheck_configure "$OPCHECK_BUILD_DIR" || return 1
  if [ "${1:-all}" = run ]; then
    local targets
    mapfile -t targets < <(opcheck_run_targets "$OPCHECK_BUILD_DIR")
    opcheck_compile "$OPCHECK_BUILD_DIR" --target "${targets[@]}"
  else
    opcheck_compile "$OPCHECK_BUILD_DIR"
  fi
}

# What the opcheck command $1 needs of Python beyond torch, installed into the project's own environment: NumPy and
# expecttest for import-opinfo (torch.testing._internal's OpInfo database imports them), scripts/requirements-opinfo.txt.
# Another environment (OPCHECK_PYTHON, an active one) is the user's: the exact pip line is printed, nothing installed.
opcheck_command_requirements() {
  local file="" imports=""
  case "${1:-}" in
    import-opinfo) file=requirements-opinfo.txt; imports="numpy, expecttest" ;;
    *) return 0 ;;
  esac
  "$OPCHECK_PYTHON" -c "import $imports" 2>/dev/null && return 0
  if [ "$OPCHECK_PYTHON" != "$OPCHECK_VENV/bin/python" ]; then
    opcheck_log "$1 needs $imports in $OPCHECK_PYTHON, which lacks one of them."
    opcheck_log "Fix: $OPCHECK_PYTHON -m pip install -r $OPCHECK_ROOT/scripts/$file"
    return 1
  fi
  opcheck_log "installing what $1 needs ($imports) into $OPCHECK_VENV (scripts/$file)"
  "$OPCHECK_PYTHON" -m pip install -q -r "$OPCHECK_ROOT/scripts/$file" >&2
}

# --tests first also installs the Python test requirements and builds everything; --run builds only what
# `opcheck run` needs (scripts/run.sh). The rest are extra Debian packages.
opcheck_bootstrap() {
  local with_tests=0 what=all
  case "${1:-}" in
    --tests) with_tests=1; shift ;;
    --run) what=run; shift ;;
  esac
  opcheck_install_packages "${OPCHECK_BUILD_PACKAGES[@]}" "$@" || return 1
  opcheck_python_env "$with_tests" || return 1
  opcheck_build "$what"
}
