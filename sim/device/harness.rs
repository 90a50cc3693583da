//! The timing harness (`harness`): one translated workload on an opened adapter, run R times after warm-up,
//! each run timed by timestamp queries written at the beginning and end of its compute pass, and each
//! run's memory read back and checked.
//!
//! Models: what a benchmark harness on a GPU does — fresh initial memory before every run (a GPU-side
//! copy from a pristine buffer, outside the timed pass), one dispatch per pass, timestamps converted to
//! ns with the queue's timestamp period. Does not model: clock locking or power states (the median of R
//! repetitions is the number we keep; min and max show the spread).
//!
//! Results are checked after every run, warm-up included: a fault (out-of-bounds, division by zero,
//! step limit), a failed workload check or a wgpu error is a failed measurement, never a number.

use super::adapter::Device;
use super::schema::ShaderPath;
pub use super::schema::Timing;
use super::wgsl::{self, Binding, Shader, Translation, FAULT_WORDS};
use super::DeviceError;
use crate::machine::CheckOutcome;
use crate::workload::Workload;
use std::time::Duration;

/// How long one submission may take before the run is declared hung.
pub const SUBMIT_TIMEOUT: Duration = Duration::from_secs(300);

/// One run's outcome.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// Pass time from its timestamps (`None` without timestamp queries).
    pub ns: Option<f64>,
    /// Final raw element values of each workload buffer.
    pub buffers: Vec<Vec<u64>>,
}

/// A workload ready to dispatch: pipeline, buffers and bindings created once, reused by every run.
pub struct Compiled<'g> {
    gpu: &'g Device,
    pub workload: Workload,
    pub translation: Translation,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    mem: wgpu::Buffer,
    pristine: wgpu::Buffer,
    fault: wgpu::Buffer,
    readback: wgpu::Buffer,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer)>,
    mem_bytes: u64,
}

fn align4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

impl Device {
    /// Translates a workload to WGSL and compiles it for this device.
    pub fn compile(&self, wl: &Workload, opts: wgsl::Options) -> Result<Compiled<'_>, DeviceError> {
        self.compile_with(wl, opts, ShaderPath::Wgsl)
    }

    /// Translates a workload along `path` (WGSL, or SPIR-V with the Vulkan memory model) and compiles
    /// it for this device.
    pub fn compile_with(
        &self,
        wl: &Workload,
        opts: wgsl::Options,
        path: ShaderPath,
    ) -> Result<Compiled<'_>, DeviceError> {
        let t = match path {
            ShaderPath::Wgsl => wgsl::translate(wl, self.caps(), opts)?,
            ShaderPath::Spirv => super::spirv::translate(wl, self.spirv_caps(), opts)?,
        };
        self.compile_translated(wl, t)
    }

    /// Compiles an existing translation of `wl` for this device.
    pub fn compile_translated(
        &self,
        wl: &Workload,
        t: Translation,
    ) -> Result<Compiled<'_>, DeviceError> {
        let name = format!("{} ({})", wl.kernel.name, wl.kernel.file);
        let lim = &self.report.limits;
        let [gx, gy, gz] = t.groups;
        let [sx, sy, sz] = t.workgroup_size;
        let launch = |message: String| DeviceError::Launch {
            workload: name.clone(),
            message,
        };
        if gx.max(gy).max(gz) > lim.max_workgroups_per_dimension {
            return Err(launch(format!(
                "{gx} x {gy} x {gz} work-groups: this adapter allows at most {} per dimension",
                lim.max_workgroups_per_dimension
            )));
        }
        if sx * sy * sz > lim.max_invocations_per_workgroup
            || sx > lim.max_workgroup_size[0]
            || sy > lim.max_workgroup_size[1]
            || sz > lim.max_workgroup_size[2]
        {
            return Err(launch(format!(
                "work-groups of {sx} x {sy} x {sz}: this adapter allows {} invocations, at most {:?}",
                lim.max_invocations_per_workgroup, lim.max_workgroup_size
            )));
        }
        if wl.kernel.local_bytes > lim.max_workgroup_storage_bytes {
            return Err(launch(format!(
                "{} bytes of local memory: this adapter allows {}",
                wl.kernel.local_bytes, lim.max_workgroup_storage_bytes
            )));
        }
        let mem_bytes = align4(t.memory.len() as u64);
        if mem_bytes > lim.max_storage_buffer_binding_bytes || mem_bytes > lim.max_buffer_bytes {
            return Err(launch(format!(
                "{mem_bytes} bytes of buffers: this adapter binds at most {} bytes",
                lim.max_storage_buffer_binding_bytes
                    .min(lim.max_buffer_bytes)
            )));
        }
        let d = &self.device;
        // The bindings the pipeline's layout has: a WGSL module's own (wgpu reflects them); for a
        // passed-through SPIR-V module, which wgpu cannot reflect, every binding up to the highest
        // the module uses (the unused ones bound to the memory too). With gaps in the numbers, the
        // views of lavapipe's 64-bit atomics reached the wrong buffer (`Binding` numbers are fixed
        // per view, and a module uses a subset).
        let bound: Vec<Binding> = match &t.shader {
            Shader::Wgsl(_) => t.bindings.to_vec(),
            Shader::Spirv(_) => {
                let top = t.bindings.iter().map(|b| b.index()).max().unwrap_or(0);
                Binding::ALL
                    .into_iter()
                    .filter(|b| b.index() <= top)
                    .collect()
            }
        };
        let scope = d.push_error_scope(wgpu::ErrorFilter::Validation);
        let pipeline = match &t.shader {
            Shader::Wgsl(src) => {
                let module = d.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(&name),
                    source: wgpu::ShaderSource::Wgsl(src.as_str().into()),
                });
                d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&name),
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
            }
            Shader::Spirv(words) => {
                if !self.passthrough {
                    return Err(launch(
                        "a SPIR-V translation needs SPIR-V passthrough (PASSTHROUGH_SHADERS), \
                         which this device does not have"
                            .into(),
                    ));
                }
                // SAFETY: the module is what `spirv::translate` wrote; the tests validate every
                // kernel's and litmus launch's module with spirv-val (Vulkan 1.2 environment).
                let module = unsafe {
                    d.create_shader_module_passthrough(wgpu::ShaderModuleDescriptorPassthrough {
                        label: Some(&name),
                        entry_points: vec![wgpu::PassthroughShaderEntryPoint {
                            name: "main".into(),
                            workgroup_size: (sx, sy, sz),
                        }]
                        .into(),
                        spirv: Some(words.as_slice().into()),
                        ..Default::default()
                    })
                };
                // wgpu cannot reflect a passed-through module: the layout is explicit.
                let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bound
                    .iter()
                    .map(|b| wgpu::BindGroupLayoutEntry {
                        binding: b.index(),
                        visibility: wgpu::ShaderStages::COMPUTE,
                        ty: wgpu::BindingType::Buffer {
                            ty: wgpu::BufferBindingType::Storage { read_only: false },
                            has_dynamic_offset: false,
                            min_binding_size: None,
                        },
                        count: None,
                    })
                    .collect();
                let bgl = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(&name),
                    entries: &layout_entries,
                });
                let layout = d.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some(&name),
                    bind_group_layouts: &[Some(&bgl)],
                    immediate_size: 0,
                });
                d.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&name),
                    layout: Some(&layout),
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
            }
        };
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(DeviceError::Shader {
                workload: name,
                message: e.to_string(),
            });
        }
        use wgpu::BufferUsages as U;
        let mut init = t.memory.clone();
        init.resize(mem_bytes as usize, 0);
        let pristine = wgpu::util::DeviceExt::create_buffer_init(
            d,
            &wgpu::util::BufferInitDescriptor {
                label: Some("pristine memory"),
                contents: &init,
                usage: U::COPY_SRC | U::COPY_DST,
            },
        );
        let mem = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("memory"),
            size: mem_bytes,
            usage: U::STORAGE | U::COPY_DST | U::COPY_SRC,
            mapped_at_creation: false,
        });
        let fault_bytes = (FAULT_WORDS * 4) as u64;
        let fault = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("fault record"),
            size: fault_bytes,
            usage: U::STORAGE | U::COPY_DST | U::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = d.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: mem_bytes + fault_bytes,
            usage: U::MAP_READ | U::COPY_DST,
            mapped_at_creation: false,
        });
        let entries: Vec<wgpu::BindGroupEntry> = bound
            .iter()
            .map(|b| wgpu::BindGroupEntry {
                binding: b.index(),
                resource: if *b == Binding::Fault {
                    fault.as_entire_binding()
                } else {
                    mem.as_entire_binding()
                },
            })
            .collect();
        let bind_group = d.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&name),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        let queries = self.timestamp_period_ns.map(|_| {
            let qs = d.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamps"),
                size: 16,
                usage: U::QUERY_RESOLVE | U::COPY_SRC,
                mapped_at_creation: false,
            });
            (qs, resolve)
        });
        let errs = self.take_errors();
        if !errs.is_empty() {
            return Err(DeviceError::Shader {
                workload: name,
                message: errs.join("; "),
            });
        }
        Ok(Compiled {
            gpu: self,
            workload: wl.clone(),
            translation: t,
            pipeline,
            bind_group,
            mem,
            pristine,
            fault,
            readback,
            queries,
            mem_bytes,
        })
    }
}

impl Compiled<'_> {
    /// Replaces the initial memory with `wl`'s: the same kernel and buffer sizes with other contents
    /// (a litmus dispatch with a new placement), without compiling again.
    pub fn reload(&mut self, wl: &Workload) -> Result<(), DeviceError> {
        let same_shape = wl.kernel == self.workload.kernel
            && wl.geometry == self.workload.geometry
            && wl.buffers.len() == self.workload.buffers.len()
            && wl
                .buffers
                .iter()
                .zip(&self.workload.buffers)
                .all(|(a, b)| a.name == b.name && a.elem == b.elem && a.len == b.len);
        if !same_shape {
            return Err(DeviceError::Launch {
                workload: self.name(),
                message: "reload needs the same kernel, geometry and buffer sizes".into(),
            });
        }
        let mut bytes = crate::machine::memory::GlobalMemory::new(&wl.buffers, 0).into_values();
        bytes.resize(self.mem_bytes as usize, 0);
        self.gpu.queue.write_buffer(&self.pristine, 0, &bytes);
        self.workload = wl.clone();
        Ok(())
    }

    fn name(&self) -> String {
        format!(
            "{} ({})",
            self.workload.kernel.name, self.workload.kernel.file
        )
    }

    /// One dispatch from fresh initial memory: its pass time and final buffers, or why it failed.
    pub fn run_once(&self) -> Result<RunOutcome, DeviceError> {
        let g = self.gpu;
        let d = &g.device;
        let fault_bytes = (FAULT_WORDS * 4) as u64;
        let ts_read = self.queries.as_ref().map(|_| {
            d.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp readback"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        let mut enc = d.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        enc.copy_buffer_to_buffer(&self.pristine, 0, &self.mem, 0, self.mem_bytes);
        enc.clear_buffer(&self.fault, 0, None);
        {
            let timestamp_writes =
                self.queries
                    .as_ref()
                    .map(|(qs, _)| wgpu::ComputePassTimestampWrites {
                        query_set: qs,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    });
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("measured dispatch"),
                timestamp_writes,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            let [x, y, z] = self.translation.groups;
            pass.dispatch_workgroups(x, y, z);
        }
        if let (Some((qs, resolve)), Some(read)) = (&self.queries, &ts_read) {
            enc.resolve_query_set(qs, 0..2, resolve, 0);
            enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
        }
        enc.copy_buffer_to_buffer(&self.mem, 0, &self.readback, 0, self.mem_bytes);
        enc.copy_buffer_to_buffer(&self.fault, 0, &self.readback, self.mem_bytes, fault_bytes);
        g.queue.submit([enc.finish()]);
        self.readback.map_async(wgpu::MapMode::Read, .., |_| {});
        if let Some(r) = &ts_read {
            r.map_async(wgpu::MapMode::Read, .., |_| {});
        }
        let polled = d.poll(wgpu::PollType::Wait {
            submission_index: None,
            timeout: Some(SUBMIT_TIMEOUT),
        });
        let errs = g.take_errors();
        if !errs.is_empty() {
            return Err(DeviceError::Dispatch {
                workload: self.name(),
                message: errs.join("; "),
            });
        }
        if let Err(e) = polled {
            return Err(DeviceError::Dispatch {
                workload: self.name(),
                message: format!("waiting for the dispatch: {e}"),
            });
        }
        let mapped = |b: &wgpu::Buffer| -> Result<Vec<u8>, DeviceError> {
            let v = b.get_mapped_range(..).map_err(|e| DeviceError::Dispatch {
                workload: self.name(),
                message: format!("reading results back: {e}"),
            })?;
            Ok(v.to_vec())
        };
        let bytes = mapped(&self.readback)?;
        self.readback.unmap();
        let ns = match (&ts_read, g.timestamp_period_ns) {
            (Some(r), Some(period)) => {
                let t = mapped(r)?;
                r.unmap();
                let begin = u64::from_le_bytes(t[0..8].try_into().expect("8 bytes"));
                let end = u64::from_le_bytes(t[8..16].try_into().expect("8 bytes"));
                Some(end.saturating_sub(begin) as f64 * period)
            }
            _ => None,
        };
        let mut fault = [0u32; FAULT_WORDS];
        for (i, w) in fault.iter_mut().enumerate() {
            let o = self.mem_bytes as usize + 4 * i;
            *w = u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        }
        if let Some(msg) = self
            .translation
            .describe_fault(&self.workload.kernel, &fault)
        {
            return Err(DeviceError::Fault(msg));
        }
        let buffers = self
            .workload
            .buffers
            .iter()
            .zip(&self.translation.buffers)
            .map(|(b, &(off, _))| {
                let eb = b.elem.width().bytes() as usize;
                (0..b.len as usize)
                    .map(|i| {
                        let o = off as usize + i * eb;
                        let mut w = [0u8; 8];
                        w[..eb].copy_from_slice(&bytes[o..o + eb]);
                        u64::from_le_bytes(w)
                    })
                    .collect()
            })
            .collect();
        Ok(RunOutcome { ns, buffers })
    }

    /// Runs once and evaluates the workload's checks; a failed check is an error naming it.
    pub fn run_checked(&self) -> Result<(RunOutcome, Vec<CheckOutcome>), DeviceError> {
        let out = self.run_once()?;
        let (checks, _) = crate::machine::checks::evaluate(&self.workload, &out.buffers);
        if let Some(c) = checks.iter().find(|c| !c.passed) {
            return Err(DeviceError::WrongResult {
                location: c.location.clone(),
                check: c.text.clone(),
                detail: c.detail.clone().unwrap_or_default(),
            });
        }
        Ok((out, checks))
    }

    /// `warmup` unrecorded runs, then `reps` timed runs; every run is checked.
    pub fn measure(&self, warmup: u32, reps: u32) -> Result<(Timing, RunOutcome), DeviceError> {
        for _ in 0..warmup {
            self.run_checked()?;
        }
        let mut samples = Vec::new();
        let mut last = None;
        for _ in 0..reps.max(1) {
            let (out, _) = self.run_checked()?;
            samples.push(out.ns.ok_or_else(|| DeviceError::NoTimestamps {
                adapter: self.gpu.report.name.clone(),
            })?);
            last = Some(out);
        }
        let timing = Timing::of(samples).expect("at least one repetition");
        Ok((timing, last.expect("at least one repetition")))
    }
}
