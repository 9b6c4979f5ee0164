//! The wgpu device (Vulkan first, GL as fallback), offscreen colour targets and the 3D views'
//! depth and ID targets, reading textures back to memory, and the set-up the passes share:
//! textures, uniform buffers, bind group layouts and bind groups, colour attachments and render
//! pipelines. The leaf under every GPU pass.

use crate::error::{one_line, VizError};
use std::sync::{Arc, Mutex};

/// Colour format of everything the viewer renders: gamma-space bytes, as egui expects, so a
/// palette colour written by a pass reaches the screen (and the screenshot) unchanged.
pub const COLOUR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
/// Depth format of the 3D passes.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// The device and queue, and the first GPU error wgpu reported (validation errors must not
/// panic the viewer: they are turned into a [`VizError::Gpu`]).
pub struct Gpu {
    /// Kept for the device's lifetime: a window's surface was made from it.
    _instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    error: Arc<Mutex<Option<String>>>,
}

impl Gpu {
    /// A device for offscreen rendering, or for `surface` when given. Tries Vulkan (lavapipe
    /// on a machine without a GPU), then GL (llvmpipe through EGL).
    pub fn new(
        instance_for: impl Fn(wgpu::Backends) -> wgpu::Instance,
        surface_for: impl Fn(&wgpu::Instance) -> Option<wgpu::Surface<'static>>,
    ) -> Result<(Gpu, Option<wgpu::Surface<'static>>), VizError> {
        let order = match std::env::var("GPUHEAT_VIZ_BACKEND").as_deref() {
            Ok("gl") => vec![wgpu::Backends::GL],
            Ok("vulkan") => vec![wgpu::Backends::VULKAN],
            _ => vec![wgpu::Backends::VULKAN, wgpu::Backends::GL],
        };
        for backends in order {
            let instance = instance_for(backends);
            let surface = surface_for(&instance);
            let adapter =
                pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: wgpu::PowerPreference::HighPerformance,
                    force_fallback_adapter: false,
                    compatible_surface: surface.as_ref(),
                    ..Default::default()
                }));
            let Ok(adapter) = adapter else { continue };
            let gpu = Gpu::with_adapter(instance, adapter)?;
            return Ok((gpu, surface));
        }
        Err(VizError::NoAdapter)
    }

    /// A device with no window.
    pub fn headless() -> Result<Gpu, VizError> {
        let (gpu, _) = Gpu::new(
            |backends| {
                wgpu::Instance::new(wgpu::InstanceDescriptor {
                    backends,
                    ..wgpu::InstanceDescriptor::new_without_display_handle()
                })
            },
            |_| None,
        )?;
        Ok(gpu)
    }

    fn with_adapter(instance: wgpu::Instance, adapter: wgpu::Adapter) -> Result<Gpu, VizError> {
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gpuheat-viz"),
            required_features: wgpu::Features::empty(),
            // The adapter's own limits: a big frame's geometry wants large buffers.
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| VizError::NoDevice {
            adapter: format!("{} ({:?})", info.name, info.backend),
            reason: one_line(&e.to_string()),
        })?;
        let error = Arc::new(Mutex::new(None::<String>));
        let sink = error.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut slot = sink.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(one_line(&e.to_string()));
            }
        }));
        Ok(Gpu {
            _instance: instance,
            adapter,
            device,
            queue,
            error,
        })
    }

    /// `Vulkan: llvmpipe (LLVM …)`, for the status line.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{:?}: {}", info.backend, info.name)
    }

    /// The first GPU error since the device was made, if any.
    pub fn check(&self) -> Result<(), VizError> {
        match self.error.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            Some(e) => Err(VizError::Gpu(e)),
            None => Ok(()),
        }
    }

    /// Blocks until the GPU has finished everything submitted.
    pub fn wait(&self) {
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
    }
}

/// A texture a pass renders into and egui shows (or a screenshot reads).
pub struct Target {
    pub texture: wgpu::Texture,
    pub view: wgpu::TextureView,
    pub size: [u32; 2],
}

impl Target {
    pub fn new(device: &wgpu::Device, size: [u32; 2], label: &str) -> Target {
        Target::with_format(device, size, label, COLOUR_FORMAT)
    }

    pub fn with_format(
        device: &wgpu::Device,
        size: [u32; 2],
        label: &str,
        format: wgpu::TextureFormat,
    ) -> Target {
        let size = [size[0].max(1), size[1].max(1)];
        let texture = texture_2d(
            device,
            label,
            size,
            format,
            wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
        );
        let view = texture.create_view(&Default::default());
        Target {
            texture,
            view,
            size,
        }
    }
}

/// A 2D texture of one mip level and one sample (a zero side counts as 1).
pub fn texture_2d(
    device: &wgpu::Device,
    label: &str,
    size: [u32; 2],
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size[0].max(1),
            height: size[1].max(1),
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}

/// Writes `data` (tightly packed rows) into a whole texture.
pub fn upload(
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
    size: [u32; 2],
    bytes_per_texel: u32,
    data: &[u8],
) {
    queue.write_texture(
        texture.as_image_copy(),
        data,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(size[0] * bytes_per_texel),
            rows_per_image: Some(size[1]),
        },
        wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        },
    );
}

/// The targets of the 3D views, resized with the view.
pub struct DepthIds {
    pub depth: wgpu::TextureView,
    pub ids: wgpu::Texture,
    pub ids_view: wgpu::TextureView,
    pub size: [u32; 2],
}

impl DepthIds {
    /// The depth buffer as a 3D pass uses it: cleared to far, not kept after the pass.
    pub fn cleared_depth(&self) -> wgpu::RenderPassDepthStencilAttachment<'_> {
        wgpu::RenderPassDepthStencilAttachment {
            view: &self.depth,
            depth_ops: Some(wgpu::Operations {
                load: wgpu::LoadOp::Clear(1.0),
                store: wgpu::StoreOp::Discard,
            }),
            stencil_ops: None,
        }
    }

    pub fn new(device: &wgpu::Device, size: [u32; 2]) -> DepthIds {
        let depth = texture_2d(
            device,
            "depth",
            size,
            DEPTH_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let ids = texture_2d(
            device,
            "draw ids",
            size,
            wgpu::TextureFormat::R32Uint,
            wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::TEXTURE_BINDING,
        );
        DepthIds {
            depth: depth.create_view(&Default::default()),
            ids_view: ids.create_view(&Default::default()),
            ids,
            size,
        }
    }

    /// Slot + 1 of the draw at view pixel (`x`, `y`), 0 for none.
    pub fn read(&self, gpu: &Gpu, x: u32, y: u32) -> Option<u32> {
        if x >= self.size[0] || y >= self.size[1] {
            return None;
        }
        let bytes = read_texture(gpu, &self.ids, [x, y], [1, 1]).ok()?;
        Some(u32::from_le_bytes(bytes[..4].try_into().ok()?))
    }

    /// The whole ID target, rows top first.
    pub fn read_all(&self, gpu: &Gpu) -> Option<Vec<u32>> {
        let bytes = read_texture(gpu, &self.ids, [0, 0], self.size).ok()?;
        Some(bytemuck::pod_collect_to_vec(&bytes))
    }
}

/// Clear colour of the 3D views.
pub const BACKGROUND: wgpu::Color = wgpu::Color {
    r: 0.09,
    g: 0.09,
    b: 0.10,
    a: 1.0,
};

/// A colour attachment that starts from `load` (a clear colour, or what the target holds)
/// and keeps what the pass draws.
pub fn colour_attachment(
    view: &wgpu::TextureView,
    load: wgpu::LoadOp<wgpu::Color>,
) -> Option<wgpu::RenderPassColorAttachment<'_>> {
    Some(wgpu::RenderPassColorAttachment {
        view,
        depth_slice: None,
        resolve_target: None,
        ops: wgpu::Operations {
            load,
            store: wgpu::StoreOp::Store,
        },
    })
}

/// A uniform buffer of `size` bytes, written with `Queue::write_buffer`.
pub fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A uniform buffer's entry of a bind group layout.
pub fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A 2D texture's entry of a bind group layout (no sampler: the shaders `textureLoad`).
pub fn texture_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    sample_type: wgpu::TextureSampleType,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Texture {
            sample_type,
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    }
}

/// A bind group layout of `entries`.
pub fn bind_group_layout(
    device: &wgpu::Device,
    label: &str,
    entries: &[wgpu::BindGroupLayoutEntry],
) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries,
    })
}

/// A bind group of `layout` whose binding `i` is the `i`th of `resources`: every layout here
/// numbers its bindings from 0 without gaps.
pub fn bind_group<'a>(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::BindGroupLayout,
    resources: impl IntoIterator<Item = wgpu::BindingResource<'a>>,
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = resources
        .into_iter()
        .enumerate()
        .map(|(i, resource)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource,
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}

/// Bytes per row of a texture copy: wgpu wants a multiple of 256.
pub fn padded_row(width: u32, bytes_per_pixel: u32) -> u32 {
    let row = width * bytes_per_pixel;
    row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT
}

/// Copies a region of a 4-byte-per-texel texture (RGBA8, BGRA8 or R32Uint) to memory, rows
/// top first, waiting for the GPU.
pub fn read_texture(
    gpu: &Gpu,
    texture: &wgpu::Texture,
    origin: [u32; 2],
    size: [u32; 2],
) -> Result<Vec<u8>, VizError> {
    let row = padded_row(size[0], 4);
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: u64::from(row) * u64::from(size[1]),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d {
                x: origin[0],
                y: origin[1],
                z: 0,
            },
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: Some(size[1]),
            },
        },
        wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        },
    );
    gpu.queue.submit([encoder.finish()]);
    let slice = buffer.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    gpu.wait();
    rx.recv()
        .map_err(|_| VizError::Gpu("texture read-back was dropped".into()))?
        .map_err(|e| VizError::Gpu(one_line(&e.to_string())))?;
    let data = slice
        .get_mapped_range()
        .map_err(|e| VizError::Gpu(one_line(&e.to_string())))?;
    let mut out = Vec::with_capacity((size[0] * size[1] * 4) as usize);
    for y in 0..size[1] as usize {
        let start = y * row as usize;
        out.extend_from_slice(&data[start..start + size[0] as usize * 4]);
    }
    drop(data);
    buffer.unmap();
    gpu.check()?;
    Ok(out)
}

/// What varies between the viewer's render pipelines; the rest is shared: triangle lists, no
/// culling (draws are seen from both sides in 3D), no multisampling, one bind group.
pub struct PipelineDesc<'a> {
    pub label: &'a str,
    pub shader: &'a wgpu::ShaderModule,
    /// Vertex and fragment entry points.
    pub entry_points: (&'a str, &'a str),
    pub layout: &'a wgpu::BindGroupLayout,
    pub buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    pub targets: &'a [Option<wgpu::ColorTargetState>],
    /// A depth test against a [`DEPTH_FORMAT`] target with this comparison, writing depth.
    pub depth: Option<wgpu::CompareFunction>,
}

/// A render pipeline as [`PipelineDesc`] says.
pub fn render_pipeline(device: &wgpu::Device, d: &PipelineDesc) -> wgpu::RenderPipeline {
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(d.label),
        bind_group_layouts: &[Some(d.layout)],
        immediate_size: 0,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(d.label),
        layout: Some(&layout),
        vertex: wgpu::VertexState {
            module: d.shader,
            entry_point: Some(d.entry_points.0),
            compilation_options: Default::default(),
            buffers: d.buffers,
        },
        fragment: Some(wgpu::FragmentState {
            module: d.shader,
            entry_point: Some(d.entry_points.1),
            compilation_options: Default::default(),
            targets: d.targets,
        }),
        primitive: Default::default(),
        depth_stencil: d.depth.map(|compare| wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(true),
            depth_compare: Some(compare),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        multiview_mask: None,
        cache: None,
    })
}

/// The pipeline of a pass that covers its [`COLOUR_FORMAT`] target with one triangle made
/// from the vertex index (entry points `vs` and `fs`, no vertex buffer, no depth): the heat
/// map and the 3D view's outline.
pub fn full_screen_pipeline(
    device: &wgpu::Device,
    label: &str,
    shader: &wgpu::ShaderModule,
    layout: &wgpu::BindGroupLayout,
) -> wgpu::RenderPipeline {
    render_pipeline(
        device,
        &PipelineDesc {
            label,
            shader,
            entry_points: ("vs", "fs"),
            layout,
            buffers: &[],
            targets: &[Some(COLOUR_FORMAT.into())],
            depth: None,
        },
    )
}
