#!/usr/bin/env bash
# Installs the system packages gpumemsim's tests need on Debian/Ubuntu, each group only when missing:
#   vulkan: the Vulkan loader and Mesa's lavapipe (a CPU Vulkan device), for the wgpu backend's tests,
#           and spirv-tools (spirv-val), which validates the SPIR-V translation's modules;
#   slurm:  Slurm (slurm-wlm: slurmctld, slurmd, the client commands) and munge, for the test that runs
#           a sweep on a one-node Slurm cluster (scripts/slurm-test.sh);
#   nvrtc:  NVIDIA's runtime compiler and the CUDA headers (pip wheels nvidia-cuda-nvrtc-cu12,
#           nvidia-cuda-runtime-cu12, nvidia-cuda-cccl-cu12; no GPU needed), so that `.cu` files are
#           compiled by NVRTC (docs/ptx.md). Only where pip is available; without them the builtin
#           C front end still runs `.cu` files.
#   python: with pip, the Python package's build and test tools (maturin, pandas, pytest, nbclient,
#           ipykernel, matplotlib) for scripts/python-test.sh; nothing (and a note) without pip.
# Usage: scripts/install-deps.sh [vulkan] [slurm] [nvrtc] [python]   (no argument: all four). Uses sudo when not run as root.
# On a machine with systemd, installing munge starts the system's munge service and slurm-wlm enables
# slurmctld/slurmd units that stay inactive without /etc/slurm/slurm.conf; the Slurm test runs its own
# private daemons and touches neither.
set -euo pipefail
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(vulkan slurm nvrtc python)
have_nvrtc() { python3 -c 'import nvidia.cuda_nvrtc, nvidia.cuda_runtime, nvidia.cuda_cccl' >/dev/null 2>&1; }

# --- python (pip packages, not apt): each module only when it cannot be imported.
python_deps() {
  local py=${PYTHON:-python3}
  if ! "$py" -m pip --version >/dev/null 2>&1; then
    echo "install-deps: no pip for $py: the Python package's tests (scripts/python-test.sh) need it" >&2
    return 0
  fi
  local missing
  missing=$("$py" -c 'import importlib.util, sys
print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))' \
    maturin pandas pytest nbclient ipykernel matplotlib)
  [ -z "$missing" ] && return 0
  echo "install-deps: pip installing $missing" >&2
  # shellcheck disable=SC2086
  "$py" -m pip install -q $missing
}
for g in "${groups[@]}"; do
  if [ "$g" = python ]; then python_deps; fi
done
# --- end python
have_loader() { ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; }
have_lavapipe() { ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1; }
have_all() { for c in "$@"; do command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] || return 1; done; }
packages=()
for g in "${groups[@]}"; do
  case "$g" in
    vulkan) { have_loader && have_lavapipe; } || packages+=(mesa-vulkan-drivers libvulkan1)
            have_all spirv-val || packages+=(spirv-tools) ;;
    slurm) have_all slurmctld slurmd slurmstepd sbatch squeue scancel scontrol sinfo munged mungekey \
             || packages+=(slurm-wlm munge) ;;
    nvrtc) if ! have_nvrtc; then
             pip=$(command -v pip3 || command -v pip || true)
             if [ -z "$pip" ]; then
               echo "install-deps: no pip here: NVRTC not installed (the builtin C front end runs .cu files; NVRTC would compile full CUDA C++)" >&2
             else
               echo "install-deps: installing NVRTC and the CUDA headers with $pip" >&2
               "$pip" install -q --user nvidia-cuda-nvrtc-cu12 nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12 \
                 || "$pip" install -q nvidia-cuda-nvrtc-cu12 nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12
             fi
           fi ;;
    python) ;;  # pip, above
    *) echo "install-deps: unknown group $g (vulkan, slurm, nvrtc, python)" >&2; exit 2 ;;
  esac
done
if [ ${#packages[@]} -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: no apt-get here; install ${packages[*]} (or your system's equivalents) by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${packages[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
