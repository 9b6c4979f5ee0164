//! The Surface tab: the heat map as a height field. The map is reduced to at most
//! [`MAX_CELLS`]² cells by taking each block's maximum (a hot spot smaller than a block still
//! stands out), heights and colours follow the palette position on the chosen scale, and the
//! frame's colour shows where there is no heat.

use crate::camera::Mat4;
use crate::gpu::{
    bind_group, bind_group_layout, colour_attachment, render_pipeline, uniform_buffer,
    uniform_entry, DepthIds, Gpu, PipelineDesc, BACKGROUND, COLOUR_FORMAT,
};
use gpuheat_analysis::palette::Palette;
use gpuheat_session::HeatMap;
use wgpu::util::DeviceExt;

/// Most cells along each side of the grid.
pub const MAX_CELLS: u32 = 256;
/// Height of the hottest cell, in world units (the map's longer side spans 2).
const HEIGHT: f32 = 0.6;

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct SurfaceVertex {
    pos: [f32; 3],
    normal: [f32; 3],
    colour: [u8; 4],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Uniforms {
    view_proj: Mat4,
    light: [f32; 4],
}

/// The grid: per cell, the block maximum and the frame colour at the block's centre.
pub struct Grid {
    pub cols: u32,
    pub rows: u32,
    pub values: Vec<f64>,
    colours: Vec<[u8; 3]>,
    /// Map width and height.
    extent: [f32; 2],
}

/// Reduces `values` (row-major, GL rows bottom first) of a `width`×`height` map.
pub fn grid(map: &HeatMap, values: &[f64]) -> Grid {
    let (w, h) = (map.width.max(1), map.height.max(1));
    let cols = w.min(MAX_CELLS);
    let rows = h.min(MAX_CELLS);
    let mut out = vec![0f64; (cols * rows) as usize];
    let mut colours = vec![[40u8; 3]; (cols * rows) as usize];
    for y in 0..map.height {
        let gy = (u64::from(y) * u64::from(rows) / u64::from(h)) as u32;
        for x in 0..map.width {
            let gx = (u64::from(x) * u64::from(cols) / u64::from(w)) as u32;
            let i = (y * map.width + x) as usize;
            let c = (gy * cols + gx) as usize;
            if values[i] > out[c] {
                out[c] = values[i];
            }
        }
    }
    if !map.colour.is_empty() {
        for gy in 0..rows {
            for gx in 0..cols {
                let x = ((f64::from(gx) + 0.5) * f64::from(w) / f64::from(cols)) as usize;
                let y = ((f64::from(gy) + 0.5) * f64::from(h) / f64::from(rows)) as usize;
                let i = (y.min(h as usize - 1) * w as usize + x.min(w as usize - 1)) * 4;
                if let Some(px) = map.colour.get(i..i + 3) {
                    colours[(gy * cols + gx) as usize] = [px[0], px[1], px[2]];
                }
            }
        }
    }
    Grid {
        cols,
        rows,
        values: out,
        colours,
        extent: [w as f32, h as f32],
    }
}

pub struct SurfacePass {
    pipeline: wgpu::RenderPipeline,
    uniforms: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    mesh: Option<(wgpu::Buffer, wgpu::Buffer, u32)>,
}

impl SurfacePass {
    pub fn new(gpu: &Gpu) -> SurfacePass {
        let device = &gpu.device;
        let layout = bind_group_layout(
            device,
            "surface",
            &[uniform_entry(0, wgpu::ShaderStages::VERTEX_FRAGMENT)],
        );
        let shader = device.create_shader_module(wgpu::include_wgsl!("shaders/surface.wgsl"));
        let pipeline = render_pipeline(
            device,
            &PipelineDesc {
                label: "surface",
                shader: &shader,
                entry_points: ("vs", "fs"),
                layout: &layout,
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<SurfaceVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Unorm8x4],
                })],
                targets: &[Some(COLOUR_FORMAT.into())],
                depth: Some(wgpu::CompareFunction::Less),
            },
        );
        let uniforms = uniform_buffer(
            device,
            "surface uniforms",
            std::mem::size_of::<Uniforms>() as u64,
        );
        let bind_group = bind_group(device, "surface", &layout, [uniforms.as_entire_binding()]);
        SurfacePass {
            pipeline,
            uniforms,
            bind_group,
            mesh: None,
        }
    }

    /// Builds the height field: `position` maps a cell value to [0, 1] on the chosen scale
    /// and range (`None`: below the range, untinted and flat).
    pub fn set_grid(
        &mut self,
        gpu: &Gpu,
        g: &Grid,
        palette: Palette,
        position: impl Fn(f64) -> Option<f64>,
    ) {
        let (cols, rows) = (g.cols as usize, g.rows as usize);
        let s = 2.0 / g.extent[0].max(g.extent[1]);
        let (half_w, half_h) = (g.extent[0] * s * 0.5, g.extent[1] * s * 0.5);
        let t: Vec<Option<f64>> = g.values.iter().map(|&v| position(v)).collect();
        let height = |x: usize, y: usize| t[y * cols + x].unwrap_or(0.0) as f32 * HEIGHT;
        // Cell centres: x right, GL y up becomes -z (far), height up.
        let at = |x: usize, y: usize| {
            [
                ((x as f32 + 0.5) / cols as f32) * 2.0 * half_w - half_w,
                height(x, y),
                half_h - ((y as f32 + 0.5) / rows as f32) * 2.0 * half_h,
            ]
        };
        let mut vertices = Vec::with_capacity(cols * rows);
        for y in 0..rows {
            for x in 0..cols {
                let l = at(x.saturating_sub(1), y);
                let r = at((x + 1).min(cols - 1), y);
                let d = at(x, y.saturating_sub(1));
                let u = at(x, (y + 1).min(rows - 1));
                let dx = [r[0] - l[0], r[1] - l[1], r[2] - l[2]];
                let dz = [u[0] - d[0], u[1] - d[1], u[2] - d[2]];
                // dz × dx points up for a flat grid.
                let n = [
                    dz[1] * dx[2] - dz[2] * dx[1],
                    dz[2] * dx[0] - dz[0] * dx[2],
                    dz[0] * dx[1] - dz[1] * dx[0],
                ];
                let c = match t[y * cols + x] {
                    Some(t) => palette.colour_at(t),
                    None => g.colours[y * cols + x].map(|v| (u16::from(v) * 3 / 5) as u8),
                };
                vertices.push(SurfaceVertex {
                    pos: at(x, y),
                    normal: if n == [0.0; 3] { [0.0, 1.0, 0.0] } else { n },
                    colour: [c[0], c[1], c[2], 255],
                });
            }
        }
        let mut indices: Vec<u32> = Vec::with_capacity((cols - 1) * (rows - 1) * 6);
        for y in 0..rows.saturating_sub(1) {
            for x in 0..cols.saturating_sub(1) {
                let i = (y * cols + x) as u32;
                let (c, n) = (cols as u32, 1);
                indices.extend_from_slice(&[i, i + n, i + c, i + n, i + c + n, i + c]);
            }
        }
        if indices.is_empty() {
            self.mesh = None;
            return;
        }
        let device = &gpu.device;
        let vb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("surface vertices"),
            contents: bytemuck::cast_slice(&vertices),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let ib = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("surface indices"),
            contents: bytemuck::cast_slice(&indices),
            usage: wgpu::BufferUsages::INDEX,
        });
        self.mesh = Some((vb, ib, indices.len() as u32));
    }

    pub fn render(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        depth_ids: &DepthIds,
        view_proj: Mat4,
    ) {
        gpu.queue.write_buffer(
            &self.uniforms,
            0,
            bytemuck::bytes_of(&Uniforms {
                view_proj,
                light: [0.35, 1.0, 0.45, 0.0],
            }),
        );
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("surface"),
            color_attachments: &[colour_attachment(target, wgpu::LoadOp::Clear(BACKGROUND))],
            depth_stencil_attachment: Some(depth_ids.cleared_depth()),
            ..Default::default()
        });
        let Some((vb, ib, n)) = &self.mesh else {
            return;
        };
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_vertex_buffer(0, vb.slice(..));
        pass.set_index_buffer(ib.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..*n, 0, 0..1);
    }
}
