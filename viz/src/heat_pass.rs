//! The Heat tab's GPU pass: the map's values, the frame's colour buffer and the palette as
//! textures, coloured per view pixel by `shaders/heat.wgsl`, so changing palette, scale,
//! range or zoom costs one uniform write. The selected draw's pixels are rendered into a
//! coverage mask (its own triangles, or its coverage box) whose edge the shader outlines.

use crate::gpu::{
    bind_group, bind_group_layout, colour_attachment, full_screen_pipeline, render_pipeline,
    texture_2d, texture_entry, uniform_buffer, uniform_entry, upload, Gpu, PipelineDesc,
};
use crate::options::Quantity;
use gpuheat_analysis::palette::Palette;
use gpuheat_session::HeatMap;
use wgpu::util::DeviceExt;

/// How the map is painted this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeatParams {
    /// Map coordinates at the view's centre.
    pub center: [f32; 2],
    /// View pixels per map pixel.
    pub zoom: f32,
    /// Values below `lo` are not tinted; values above `hi` take the hot end, or `clipped`.
    pub lo: f32,
    pub hi: f32,
    /// The opaque colour (0–1 RGB) of values above `hi`, marking the pixels a clipped range
    /// leaves out; `None`: the hot end.
    pub clipped: Option<[f32; 3]>,
    pub log: bool,
    /// Overdraw in the Android key: 1, 2, 3, 4+ layers.
    pub android_layers: bool,
    pub alpha: f32,
    pub show_frame: bool,
}

/// The selected draw's footprint.
#[derive(Clone, Debug, PartialEq)]
pub enum Outline {
    None,
    /// Clip-space triangle vertices drawn through `viewport` (GL x, y, width, height).
    Triangles {
        positions: Vec<[f32; 4]>,
        viewport: [i32; 4],
    },
    /// GL window coordinates x0, y0, x1, y1 (exclusive).
    Box([u32; 4]),
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Uniforms {
    size: [f32; 4],
    xform: [f32; 4],
    range: [f32; 4],
    flags: [u32; 4],
    clip: [f32; 4],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct MaskUniforms {
    viewport: [f32; 4],
    size: [f32; 4],
}

struct MapTextures {
    size: [u32; 2],
    mask: wgpu::Texture,
    bind_group: wgpu::BindGroup,
    has_colour: bool,
    values: wgpu::Texture,
}

pub struct HeatPass {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    mask_pipeline: wgpu::RenderPipeline,
    mask_layout: wgpu::BindGroupLayout,
    uniforms: wgpu::Buffer,
    lut: wgpu::Texture,
    map: Option<MapTextures>,
    outlined: bool,
}

/// The palette as 256 RGBA8 texels, position `i / 255` each.
pub fn palette_texels(palette: Palette) -> Vec<u8> {
    (0..256)
        .flat_map(|i| {
            let [r, g, b] = palette.colour_at(f64::from(i) / 255.0);
            [r, g, b, 255]
        })
        .collect()
}

impl HeatPass {
    pub fn new(gpu: &Gpu) -> HeatPass {
        let device = &gpu.device;
        let texture = |binding, filterable| {
            texture_entry(
                binding,
                wgpu::ShaderStages::FRAGMENT,
                wgpu::TextureSampleType::Float { filterable },
            )
        };
        let layout = bind_group_layout(
            device,
            "heat",
            &[
                uniform_entry(0, wgpu::ShaderStages::FRAGMENT),
                texture(1, false),
                texture(2, true),
                texture(3, true),
                texture(4, true),
            ],
        );
        let shader = device.create_shader_module(wgpu::include_wgsl!("shaders/heat.wgsl"));
        let pipeline = full_screen_pipeline(device, "heat", &shader, &layout);

        let mask_layout = bind_group_layout(
            device,
            "mask",
            &[uniform_entry(0, wgpu::ShaderStages::VERTEX)],
        );
        let mask_shader = device.create_shader_module(wgpu::include_wgsl!("shaders/mask.wgsl"));
        let mask_pipeline = render_pipeline(
            device,
            &PipelineDesc {
                label: "mask",
                shader: &mask_shader,
                entry_points: ("vs_mask", "fs_mask"),
                layout: &mask_layout,
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: 16,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x4],
                })],
                targets: &[Some(wgpu::TextureFormat::R8Unorm.into())],
                depth: None,
            },
        );

        let uniforms = uniform_buffer(
            device,
            "heat uniforms",
            std::mem::size_of::<Uniforms>() as u64,
        );
        let lut = texture_2d(
            device,
            "palette",
            [256, 1],
            wgpu::TextureFormat::Rgba8Unorm,
            wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        );
        let pass = HeatPass {
            pipeline,
            layout,
            mask_pipeline,
            mask_layout,
            uniforms,
            lut,
            map: None,
            outlined: false,
        };
        pass.set_palette(gpu, Palette::Inferno);
        pass
    }

    pub fn set_palette(&self, gpu: &Gpu, palette: Palette) {
        upload(&gpu.queue, &self.lut, [256, 1], 4, &palette_texels(palette));
    }

    /// Uploads a frame's map (its values as `quantity`) and colour buffer.
    pub fn set_map(&mut self, gpu: &Gpu, map: &HeatMap, quantity: Quantity) {
        let device = &gpu.device;
        let size = [map.width.max(1), map.height.max(1)];
        let texture = |label, format, usage| texture_2d(device, label, size, format, usage);
        let uploaded = wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST;
        let values = texture("heat values", wgpu::TextureFormat::R32Float, uploaded);
        let colour = texture("frame colour", wgpu::TextureFormat::Rgba8Unorm, uploaded);
        let mask = texture(
            "draw mask",
            wgpu::TextureFormat::R8Unorm,
            wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let has_colour = !map.colour.is_empty();
        if map.width > 0 && map.height > 0 && has_colour {
            upload(&gpu.queue, &colour, size, 4, &map.colour);
        }
        let views =
            [&values, &colour, &self.lut, &mask].map(|t| t.create_view(&Default::default()));
        let bind_group = bind_group(
            device,
            "heat",
            &self.layout,
            std::iter::once(self.uniforms.as_entire_binding())
                .chain(views.iter().map(wgpu::BindingResource::TextureView)),
        );
        self.map = Some(MapTextures {
            size,
            mask,
            bind_group,
            has_colour,
            values,
        });
        self.set_quantity(gpu, map, quantity);
        self.outlined = false;
    }

    /// Re-uploads the values of the current map as `quantity`.
    pub fn set_quantity(&self, gpu: &Gpu, map: &HeatMap, quantity: Quantity) {
        let Some(m) = &self.map else { return };
        if map.width == 0 || map.height == 0 {
            return;
        }
        let values: Vec<f32> = match quantity {
            // NaN or negative heat cannot come from a sound pass; show it as no heat.
            Quantity::Heat => map
                .heat
                .iter()
                .map(|&h| if h.is_finite() && h > 0.0 { h } else { 0.0 })
                .collect(),
            Quantity::Overdraw => map.overdraw.iter().map(|&o| o as f32).collect(),
        };
        upload(
            &gpu.queue,
            &m.values,
            m.size,
            4,
            bytemuck::cast_slice(&values),
        );
    }

    /// Renders the selected draw's footprint into the mask (now, in its own submission).
    pub fn set_outline(&mut self, gpu: &Gpu, outline: &Outline) {
        let Some(m) = &self.map else { return };
        let (w, h) = (m.size[0] as f32, m.size[1] as f32);
        let (positions, viewport): (Vec<[f32; 4]>, [f32; 4]) = match outline {
            Outline::None => (Vec::new(), [0.0; 4]),
            Outline::Triangles {
                positions,
                viewport,
            } => (positions.clone(), viewport.map(|v| v as f32)),
            Outline::Box([x0, y0, x1, y1]) => {
                let ndc = |x: u32, y: u32| [x as f32 / w * 2.0 - 1.0, y as f32 / h * 2.0 - 1.0];
                let [a, b, c, d] = [ndc(*x0, *y0), ndc(*x1, *y0), ndc(*x1, *y1), ndc(*x0, *y1)];
                let v = |p: [f32; 2]| [p[0], p[1], 0.0, 1.0];
                (vec![v(a), v(b), v(c), v(a), v(c), v(d)], [0.0, 0.0, w, h])
            }
        };
        self.outlined = !positions.is_empty();
        let device = &gpu.device;
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let view = m.mask.create_view(&Default::default());
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("mask"),
                color_attachments: &[colour_attachment(
                    &view,
                    wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                )],
                ..Default::default()
            });
            if self.outlined {
                let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("mask vertices"),
                    contents: bytemuck::cast_slice(&positions),
                    usage: wgpu::BufferUsages::VERTEX,
                });
                let uniforms = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("mask uniforms"),
                    contents: bytemuck::bytes_of(&MaskUniforms {
                        viewport,
                        size: [w, h, 0.0, 0.0],
                    }),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let bind_group = bind_group(
                    device,
                    "mask",
                    &self.mask_layout,
                    [uniforms.as_entire_binding()],
                );
                pass.set_pipeline(&self.mask_pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.set_vertex_buffer(0, vertices.slice(..));
                pass.draw(0..positions.len() as u32, 0..1);
            }
        }
        gpu.queue.submit([encoder.finish()]);
    }

    /// Forgets the map (a frame without one).
    pub fn clear(&mut self) {
        self.map = None;
        self.outlined = false;
    }

    pub fn has_map(&self) -> bool {
        self.map.is_some()
    }

    /// Paints the map into `target` (`size` in pixels).
    pub fn render(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        size: [u32; 2],
        p: &HeatParams,
    ) {
        let Some(m) = &self.map else { return };
        let u = Uniforms {
            size: [
                size[0] as f32,
                size[1] as f32,
                m.size[0] as f32,
                m.size[1] as f32,
            ],
            xform: [p.center[0], p.center[1], p.zoom.max(1e-6), 1.5],
            range: [p.lo, p.hi, p.alpha, 0.0],
            flags: [
                u32::from(p.log),
                u32::from(p.android_layers),
                u32::from(p.show_frame && m.has_colour),
                u32::from(self.outlined),
            ],
            clip: match p.clipped {
                Some([r, g, b]) => [r, g, b, 1.0],
                None => [0.0; 4],
            },
        };
        gpu.queue
            .write_buffer(&self.uniforms, 0, bytemuck::bytes_of(&u));
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("heat"),
            color_attachments: &[colour_attachment(
                target,
                wgpu::LoadOp::Clear(wgpu::Color::BLACK),
            )],
            ..Default::default()
        });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &m.bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}
