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
# Usage: scripts/install-deps.sh [vulkan] [slurm] [nvrtc]   (no argument: all three). Uses sudo when not run as root.
# On a machine with systemd, installing munge starts the system's munge service and slurm-wlm enables
# slurmctld/slurmd units that stay inactive without /etc/slurm/slurm.conf; the Slurm test runs its own
# private daemons and touches neither.
set -euo pipefail
groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(vulkan slurm nvrtc)
have_nvrtc() { python3 -c 'import nvidia.cuda_nvrtc, nvidia.cuda_runtime, nvidia.cuda_cccl' >/dev/null 2>&1; }
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
    *) echo "install-deps: unknown group $g (vulkan, slurm, nvrtc)" >&2; exit 2 ;;
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
