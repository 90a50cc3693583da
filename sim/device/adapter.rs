//! Adapter discovery: which Vulkan devices wgpu sees, what they offer that matters for measuring memory
//! systems, and opening one as a [`Device`] with the features the translation and the timing harness use.
//!
//! Models: wgpu's adapter enumeration (honouring `WGPU_BACKEND`), its feature and limit reports. Does
//! not model: surfaces, anything graphics.
//!
//! A CPU adapter (Mesa's lavapipe) is listed and usable, with a warning: it proves the harness, and its
//! timings say nothing about a GPU.

use super::schema::ShaderPath;
pub use super::schema::{AdapterReport, FeatureReport, LimitReport};
use super::wgsl::Caps;
use super::DeviceError;

/// Which shader path `measure` uses (`--shader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ShaderChoice {
    /// SPIR-V with the Vulkan memory model where the adapter offers SPIR-V passthrough, WGSL otherwise.
    #[default]
    Auto,
    Wgsl,
    Spirv,
}
use std::sync::{Arc, Mutex};

/// How to get an adapter on a machine without a GPU.
pub const INSTALL_HINT: &str = "install Mesa's lavapipe (a CPU Vulkan device) with \
     `apt-get install -y mesa-vulkan-drivers libvulkan1`, or run on a machine with a GPU and its Vulkan driver";

/// The warning printed for a CPU adapter.
pub const CPU_WARNING: &str =
    "this is a CPU adapter: its timings do not describe a GPU (it proves the \
     harness, not a memory system)";

impl FeatureReport {
    fn of(f: wgpu::Features) -> FeatureReport {
        use wgpu::Features as F;
        FeatureReport {
            timestamp_query: f.contains(F::TIMESTAMP_QUERY),
            timestamp_inside_passes: f.contains(F::TIMESTAMP_QUERY_INSIDE_PASSES),
            timestamp_inside_encoders: f.contains(F::TIMESTAMP_QUERY_INSIDE_ENCODERS),
            shader_int64: f.contains(F::SHADER_INT64),
            int64_atomic_min_max: f.contains(F::SHADER_INT64_ATOMIC_MIN_MAX),
            int64_atomic_all_ops: f.contains(F::SHADER_INT64_ATOMIC_ALL_OPS),
            float32_atomic: f.contains(F::SHADER_FLOAT32_ATOMIC),
            subgroup: f.contains(F::SUBGROUP),
            subgroup_barrier: f.contains(F::SUBGROUP_BARRIER),
            spirv_passthrough: f.contains(F::PASSTHROUGH_SHADERS),
            cooperative_matrix: f.contains(F::EXPERIMENTAL_COOPERATIVE_MATRIX),
        }
    }

    /// What the WGSL translation may use.
    pub fn caps(&self) -> Caps {
        Caps {
            int64: self.shader_int64,
            int64_atomics: self.shader_int64 && self.int64_atomic_all_ops,
            subgroups: self.subgroup,
        }
    }
}

impl AdapterReport {
    fn of(index: usize, a: &wgpu::Adapter) -> AdapterReport {
        let info = a.get_info();
        let l = a.limits();
        AdapterReport {
            index,
            name: info.name.clone(),
            backend: info.backend.to_str().to_string(),
            device_type: match info.device_type {
                wgpu::DeviceType::DiscreteGpu => "discrete_gpu",
                wgpu::DeviceType::IntegratedGpu => "integrated_gpu",
                wgpu::DeviceType::VirtualGpu => "virtual_gpu",
                wgpu::DeviceType::Cpu => "cpu",
                wgpu::DeviceType::Other => "other",
            }
            .to_string(),
            vendor_id: info.vendor,
            device_id: info.device,
            driver: info.driver.clone(),
            driver_info: info.driver_info.clone(),
            features: FeatureReport::of(a.features()),
            limits: LimitReport {
                max_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
                max_workgroup_size: [
                    l.max_compute_workgroup_size_x,
                    l.max_compute_workgroup_size_y,
                    l.max_compute_workgroup_size_z,
                ],
                max_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
                max_workgroup_storage_bytes: l.max_compute_workgroup_storage_size,
                max_storage_buffer_binding_bytes: l.max_storage_buffer_binding_size,
                max_buffer_bytes: l.max_buffer_size,
                max_storage_buffers_per_stage: l.max_storage_buffers_per_shader_stage,
                subgroup_min_size: info.subgroup_min_size,
                subgroup_max_size: info.subgroup_max_size,
            },
        }
    }

    pub fn is_cpu(&self) -> bool {
        self.device_type == "cpu"
    }

    /// A file-name-safe short name: `llvmpipe`, `nvidia-h100-80gb-hbm3`.
    pub fn slug(&self) -> String {
        let base = self.name.split(" (").next().unwrap_or(&self.name);
        let mut s = String::new();
        for c in base.chars() {
            if c.is_ascii_alphanumeric() {
                s.push(c.to_ascii_lowercase());
            } else if !s.ends_with('-') && !s.is_empty() {
                s.push('-');
            }
        }
        s.trim_end_matches('-').to_string()
    }

    /// The multi-line description `gpu list` prints.
    pub fn describe(&self) -> String {
        let yn = |b: bool| if b { "yes" } else { "no" };
        let f = &self.features;
        let l = &self.limits;
        let mut s = format!(
            "[{}] {} — {} {}, driver {} ({})\n",
            self.index, self.name, self.backend, self.device_type, self.driver, self.driver_info
        );
        s += &format!(
            "    timestamps: query {}, inside passes {}, inside encoders {}\n",
            yn(f.timestamp_query),
            yn(f.timestamp_inside_passes),
            yn(f.timestamp_inside_encoders)
        );
        s += &format!(
            "    atomics: 64-bit all ops {}, 64-bit min/max {}, f32 {}; shader int64 {}\n",
            yn(f.int64_atomic_all_ops),
            yn(f.int64_atomic_min_max),
            yn(f.float32_atomic),
            yn(f.shader_int64)
        );
        s += &format!(
            "    subgroups: {} (size {}..{}), barrier {}; SPIR-V passthrough {}\n",
            yn(f.subgroup),
            l.subgroup_min_size,
            l.subgroup_max_size,
            yn(f.subgroup_barrier),
            yn(f.spirv_passthrough)
        );
        s += &format!(
            "    work-groups: up to {} invocations ({} x {} x {}), {} per dimension, {} B shared memory\n",
            l.max_invocations_per_workgroup,
            l.max_workgroup_size[0],
            l.max_workgroup_size[1],
            l.max_workgroup_size[2],
            l.max_workgroups_per_dimension,
            l.max_workgroup_storage_bytes
        );
        s += &format!(
            "    storage buffers: {} B per binding, {} B per buffer, {} per stage\n",
            l.max_storage_buffer_binding_bytes, l.max_buffer_bytes, l.max_storage_buffers_per_stage
        );
        if self.is_cpu() {
            s += &format!("    warning: {CPU_WARNING}\n");
        }
        s
    }
}

fn instance() -> wgpu::Instance {
    wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env())
}

fn adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()))
}

/// Every adapter wgpu finds; no adapter is an error that says how to get one.
pub fn list() -> Result<Vec<AdapterReport>, DeviceError> {
    let found = adapters(&instance());
    if found.is_empty() {
        return Err(DeviceError::NoAdapter);
    }
    Ok(found
        .iter()
        .enumerate()
        .map(|(i, a)| AdapterReport::of(i, a))
        .collect())
}

/// An opened adapter: device and queue with the features the suite uses, and errors wgpu reports
/// outside an error scope collected instead of panicking.
pub struct Device {
    pub report: AdapterReport,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// Nanoseconds per timestamp tick (`None`: no timestamp queries).
    pub timestamp_period_ns: Option<f64>,
    /// SPIR-V passthrough is enabled on the device: the SPIR-V path can run.
    pub passthrough: bool,
    /// The device's `vulkanMemoryModel` and `vulkanMemoryModelDeviceScope` features are enabled.
    /// wgpu 30 enables them only together with its cooperative-matrix feature, which is requested
    /// whenever the adapter offers it; without it the SPIR-V path uses `QueueFamily` for device scope
    /// and the module declares a memory model the device did not enable (Mesa's drivers compile it
    /// regardless; the measurement file records this flag).
    pub vulkan_memory_model: bool,
    pub(super) errors: Arc<Mutex<Vec<String>>>,
}

impl Device {
    /// Opens adapter `index` (default 0, in the order of [`list`]).
    pub fn open(index: Option<usize>) -> Result<Device, DeviceError> {
        let inst = instance();
        let mut found = adapters(&inst);
        if found.is_empty() {
            return Err(DeviceError::NoAdapter);
        }
        let i = index.unwrap_or(0);
        if i >= found.len() {
            return Err(DeviceError::BadAdapterIndex {
                index: i,
                count: found.len(),
            });
        }
        let adapter = found.swap_remove(i);
        let report = AdapterReport::of(i, &adapter);
        use wgpu::Features as F;
        let wanted = F::TIMESTAMP_QUERY
            | F::TIMESTAMP_QUERY_INSIDE_PASSES
            | F::SHADER_INT64
            | F::SHADER_INT64_ATOMIC_ALL_OPS
            | F::SHADER_INT64_ATOMIC_MIN_MAX
            | F::SUBGROUP
            | F::PASSTHROUGH_SHADERS
            | F::EXPERIMENTAL_COOPERATIVE_MATRIX;
        let features = adapter.features() & wanted;
        let experimental = if features.contains(F::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: the cooperative-matrix feature is requested only for the device features wgpu
            // enables with it (the Vulkan memory model at device scope); no cooperative-matrix API is
            // used.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let desc = wgpu::DeviceDescriptor {
            label: Some("gpumemsim"),
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: experimental,
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&desc)).map_err(|e| DeviceError::Open {
                adapter: report.name.clone(),
                message: e.to_string(),
            })?;
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            if let Ok(mut v) = sink.lock() {
                v.push(e.to_string());
            }
        }));
        let timestamp_period_ns = features
            .contains(F::TIMESTAMP_QUERY)
            .then(|| queue.get_timestamp_period() as f64);
        Ok(Device {
            report,
            device,
            queue,
            timestamp_period_ns,
            passthrough: features.contains(F::PASSTHROUGH_SHADERS),
            vulkan_memory_model: features.contains(F::EXPERIMENTAL_COOPERATIVE_MATRIX),
            errors,
        })
    }

    /// What the translation may use on this device.
    pub fn caps(&self) -> Caps {
        self.report.features.caps()
    }

    /// What the SPIR-V translation may use on this device.
    pub fn spirv_caps(&self) -> super::spirv::SpirvCaps {
        super::spirv::SpirvCaps {
            base: self.caps(),
            device_scope: self.vulkan_memory_model,
        }
    }

    /// The shader path `choice` picks on this device: `auto` is SPIR-V where passthrough is enabled.
    pub fn shader_path(&self, choice: ShaderChoice) -> Result<ShaderPath, DeviceError> {
        match choice {
            ShaderChoice::Wgsl => Ok(ShaderPath::Wgsl),
            ShaderChoice::Auto if !self.passthrough => Ok(ShaderPath::Wgsl),
            ShaderChoice::Auto => Ok(ShaderPath::Spirv),
            ShaderChoice::Spirv if self.passthrough => Ok(ShaderPath::Spirv),
            ShaderChoice::Spirv => Err(DeviceError::Open {
                adapter: self.report.name.clone(),
                message: "--shader spirv needs SPIR-V passthrough (PASSTHROUGH_SHADERS, Vulkan), \
                          which this adapter does not offer"
                    .into(),
            }),
        }
    }

    /// Errors wgpu reported outside an error scope since the last call.
    pub(super) fn take_errors(&self) -> Vec<String> {
        self.errors
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }
}
