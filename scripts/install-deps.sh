#!/usr/bin/env bash
# Installs the system packages gpumemsim's tests need on Debian/Ubuntu: the Vulkan loader and Mesa's
# lavapipe (a CPU Vulkan device), so that the wgpu backend's tests have an adapter. Does nothing when they
# are already present. Uses sudo when not run as root.
set -euo pipefail
have_loader() { ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; }
have_lavapipe() { ls /usr/share/vulkan/icd.d/lvp_icd.*.json >/dev/null 2>&1; }
if have_loader && have_lavapipe; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: no apt-get here; install the Vulkan loader and Mesa's lavapipe (mesa-vulkan-drivers) by hand" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing mesa-vulkan-drivers libvulkan1 (Vulkan loader + lavapipe)" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers libvulkan1 >/dev/null
