//! The 3D tab's GPU pass: all of a frame's triangles in one vertex buffer (window-space x, y
//! and NDC depth, plus the draw's slot), coloured per draw from a small texture, and the slot
//! written to an `R32Uint` ID target that a click reads back, which stays one texel read
//! however many triangles the frame has.

use crate::camera::Mat4;
use crate::gpu::{
    bind_group, bind_group_layout, colour_attachment, full_screen_pipeline, render_pipeline,
    texture_2d, texture_entry, uniform_buffer, uniform_entry, upload, DepthIds, Gpu, PipelineDesc,
    BACKGROUND, COLOUR_FORMAT,
};
use gpuheat_session::FrameGeometry;
use wgpu::util::DeviceExt;

/// Width of the per-draw colour texture; draw slot `i` is texel (`i % W`, `i / W`).
const COLOURS_W: u32 = 1024;

/// One vertex: GL window x, y (pixels) and NDC z of the draw, and the draw's slot.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MeshVertex {
    pub pos: [f32; 3],
    pub slot: u32,
}

/// A draw present in the mesh.
#[derive(Clone, Debug)]
pub struct MeshDraw {
    /// Call index in the frame.
    pub call: u32,
    pub triangles: u32,
    /// Its vertices in the frame's vertex buffer.
    pub vertices: std::ops::Range<u32>,
    /// Vertices the agent could not keep for it.
    pub dropped_vertices: u64,
}

/// The CPU side of a frame's mesh.
pub struct MeshData {
    pub vertices: Vec<MeshVertex>,
    /// Indexed by slot, in call order.
    pub draws: Vec<MeshDraw>,
    /// Width and height of the window the draws were made for.
    pub extent: [f32; 2],
    /// Draws with geometry but no triangles (points, lines).
    pub untriangled: usize,
    /// Triangles left out because a vertex was behind the eye (w ≤ 0).
    pub clipped: u64,
}

/// Builds the mesh of `geometry`. `extent` is the window size (the heat map's, when there
/// is one); without it, the union of the draws' viewports.
pub fn mesh_data(geometry: &FrameGeometry, extent: Option<[u32; 2]>) -> MeshData {
    let extent = extent
        .map(|[w, h]| [w as f32, h as f32])
        .unwrap_or_else(|| {
            let (mut w, mut h) = (1.0f32, 1.0f32);
            for d in &geometry.draws {
                w = w.max((d.viewport[0] + d.viewport[2]) as f32);
                h = h.max((d.viewport[1] + d.viewport[3]) as f32);
            }
            [w, h]
        });
    let mut sorted: Vec<_> = geometry.draws.iter().filter(|d| d.primitive == 4).collect();
    sorted.sort_by_key(|d| d.call);
    let untriangled = geometry.draws.len() - sorted.len();
    let total: usize = sorted.iter().map(|d| d.positions.len()).sum();
    let mut vertices = Vec::with_capacity(total);
    let mut draws = Vec::with_capacity(sorted.len());
    let mut clipped = 0;
    for d in sorted {
        let slot = draws.len() as u32;
        let first = vertices.len() as u32;
        let [vx, vy, vw, vh] = d.viewport.map(|v| v as f32);
        let mut triangles = 0;
        for tri in d.positions.chunks_exact(3) {
            // The GPU clips what is behind the eye; dividing by w there is meaningless.
            if tri
                .iter()
                .any(|p| !p.iter().all(|v| v.is_finite()) || p[3] <= 1e-7)
            {
                clipped += 1;
                continue;
            }
            for p in tri {
                let (x, y, z) = (p[0] / p[3], p[1] / p[3], p[2] / p[3]);
                vertices.push(MeshVertex {
                    pos: [
                        vx + (x + 1.0) * 0.5 * vw,
                        vy + (y + 1.0) * 0.5 * vh,
                        z.clamp(-4.0, 4.0),
                    ],
                    slot,
                });
            }
            triangles += 1;
        }
        draws.push(MeshDraw {
            call: d.call,
            triangles,
            vertices: first..vertices.len() as u32,
            dropped_vertices: d.dropped_vertices,
        });
    }
    MeshData {
        vertices,
        draws,
        extent,
        untriangled,
        clipped,
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Uniforms {
    view_proj: Mat4,
    world: [f32; 4],
    params: [f32; 4],
    select: [u32; 4],
}

/// How the mesh is drawn this frame.
#[derive(Clone, Debug)]
pub struct MeshParams {
    pub view_proj: Mat4,
    /// Depth (NDC z) to world units.
    pub depth_scale: f32,
    /// World units between consecutive draws along z.
    pub explode: f32,
    /// Selected slot and its vertices.
    pub selected: Option<(u32, std::ops::Range<u32>)>,
    pub shade: bool,
}

struct GpuMesh {
    vertices: wgpu::Buffer,
    count: u32,
    colours: wgpu::Texture,
    colour_rows: u32,
    bind_group: wgpu::BindGroup,
    extent: [f32; 2],
}

pub struct MeshPass {
    pipeline: wgpu::RenderPipeline,
    /// The selected draw again, over everything: a selection is never hidden.
    xray_pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    uniforms: wgpu::Buffer,
    mesh: Option<GpuMesh>,
    outline_pipeline: wgpu::RenderPipeline,
    outline_layout: wgpu::BindGroupLayout,
    outline_uniforms: wgpu::Buffer,
}

impl MeshPass {
    pub fn new(gpu: &Gpu) -> MeshPass {
        let device = &gpu.device;
        let layout = bind_group_layout(
            device,
            "mesh",
            &[
                uniform_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT),
                texture_entry(
                    1,
                    wgpu::ShaderStages::VERTEX,
                    wgpu::TextureSampleType::Float { filterable: true },
                ),
            ],
        );
        let shader = device.create_shader_module(wgpu::include_wgsl!("shaders/mesh.wgsl"));
        let pipeline_for = |compare: wgpu::CompareFunction| {
            render_pipeline(
                device,
                &PipelineDesc {
                    label: "mesh",
                    shader: &shader,
                    entry_points: ("vs", "fs"),
                    layout: &layout,
                    buffers: &[Some(wgpu::VertexBufferLayout {
                        array_stride: std::mem::size_of::<MeshVertex>() as u64,
                        step_mode: wgpu::VertexStepMode::Vertex,
                        attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Uint32],
                    })],
                    targets: &[
                        Some(COLOUR_FORMAT.into()),
                        Some(wgpu::TextureFormat::R32Uint.into()),
                    ],
                    // Less-or-equal: coplanar draws (a UI's layers) show the later one, as
                    // the frame did.
                    depth: Some(compare),
                },
            )
        };
        let pipeline = pipeline_for(wgpu::CompareFunction::LessEqual);
        let xray_pipeline = pipeline_for(wgpu::CompareFunction::Always);
        let uniforms = uniform_buffer(
            device,
            "mesh uniforms",
            std::mem::size_of::<Uniforms>() as u64,
        );
        let (outline_pipeline, outline_layout) = outline_pipeline(device);
        let outline_uniforms = uniform_buffer(device, "outline uniforms", 16);
        MeshPass {
            pipeline,
            xray_pipeline,
            layout,
            uniforms,
            mesh: None,
            outline_pipeline,
            outline_layout,
            outline_uniforms,
        }
    }

    /// Uploads a frame's mesh; colours follow with [`MeshPass::set_colours`].
    pub fn set_mesh(&mut self, gpu: &Gpu, data: &MeshData) {
        let device = &gpu.device;
        if data.vertices.is_empty() {
            self.mesh = None;
            return;
        }
        let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("mesh vertices"),
            contents: bytemuck::cast_slice(&data.vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let rows = (data.draws.len() as u32).div_ceil(COLOURS_W).max(1);
        let colours = texture_2d(
            device,
            "draw colours",
            [COLOURS_W, rows],
            wgpu::TextureFormat::Rgba8Unorm,
            wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        );
        let bind_group = bind_group(
            device,
            "mesh",
            &self.layout,
            [
                self.uniforms.as_entire_binding(),
                wgpu::BindingResource::TextureView(&colours.create_view(&Default::default())),
            ],
        );
        self.mesh = Some(GpuMesh {
            vertices,
            count: data.vertices.len() as u32,
            colours,
            colour_rows: rows,
            bind_group,
            extent: data.extent,
        });
    }

    /// One RGB colour per draw slot.
    pub fn set_colours(&self, gpu: &Gpu, colours: &[[u8; 3]]) {
        let Some(m) = &self.mesh else { return };
        let mut texels = vec![0u8; (COLOURS_W * m.colour_rows * 4) as usize];
        for (i, c) in colours.iter().enumerate().take(texels.len() / 4) {
            texels[i * 4..i * 4 + 4].copy_from_slice(&[c[0], c[1], c[2], 255]);
        }
        upload(
            &gpu.queue,
            &m.colours,
            [COLOURS_W, m.colour_rows],
            4,
            &texels,
        );
    }

    /// Forgets the mesh (a frame without geometry).
    pub fn clear(&mut self) {
        self.mesh = None;
    }

    pub fn render(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth_ids: &DepthIds,
        p: &MeshParams,
    ) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("mesh"),
            color_attachments: &[
                colour_attachment(target, wgpu::LoadOp::Clear(BACKGROUND)),
                colour_attachment(
                    &depth_ids.ids_view,
                    wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                ),
            ],
            depth_stencil_attachment: Some(depth_ids.cleared_depth()),
            ..Default::default()
        });
        let Some(m) = &self.mesh else { return };
        let [w, h] = m.extent;
        let u = Uniforms {
            view_proj: p.view_proj,
            world: [w * 0.5, h * 0.5, 2.0 / w.max(h).max(1.0), p.depth_scale],
            params: [p.explode, 0.5, if p.shade { 1.0 } else { 0.0 }, 0.0],
            select: [
                p.selected.as_ref().map_or(u32::MAX, |s| s.0),
                COLOURS_W,
                0,
                0,
            ],
        };
        gpu.queue
            .write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&u));
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &m.bind_group, &[]);
        pass.set_vertex_buffer(0, m.vertices.slice(..));
        pass.draw(0..m.count, 0..1);
        if let Some((_, range)) = &p.selected {
            pass.set_pipeline(&self.xray_pipeline);
            pass.draw(range.clone(), 0..1);
        }
        drop(pass);
        if let Some((slot, _)) = &p.selected {
            self.outline(gpu, encoder, target, depth_ids, *slot);
        }
    }

    /// Rings the selected draw with white, from the ID target just rendered.
    fn outline(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth_ids: &DepthIds,
        slot: u32,
    ) {
        gpu.queue.write_buffer(
            &self.outline_uniforms,
            0,
            bytemuck::cast_slice(&[slot + 1, 0, 0, 0]),
        );
        let bind_group = bind_group(
            &gpu.device,
            "outline",
            &self.outline_layout,
            [
                self.outline_uniforms.as_entire_binding(),
                wgpu::BindingResource::TextureView(&depth_ids.ids_view),
            ],
        );
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("outline"),
            color_attachments: &[colour_attachment(target, wgpu::LoadOp::Load)],
            ..Default::default()
        });
        pass.set_pipeline(&self.outline_pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}

fn outline_pipeline(device: &wgpu::Device) -> (wgpu::RenderPipeline, wgpu::BindGroupLayout) {
    let layout = bind_group_layout(
        device,
        "outline",
        &[
            uniform_entry(0, wgpu::ShaderStages::FRAGMENT),
            texture_entry(
                1,
                wgpu::ShaderStages::FRAGMENT,
                wgpu::TextureSampleType::Uint,
            ),
        ],
    );
    let shader = device.create_shader_module(wgpu::include_wgsl!("shaders/outline.wgsl"));
    let pipeline = full_screen_pipeline(device, "outline", &shader, &layout);
    (pipeline, layout)
}
