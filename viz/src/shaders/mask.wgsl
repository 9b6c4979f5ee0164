// The selected draw's coverage mask, at map resolution: its clip-space triangles through its
// own viewport, GL rows bottom first.

struct Mask {
    // viewport x, y, width, height (GL window coordinates)
    viewport: vec4<f32>,
    // map width, height
    size: vec4<f32>,
};

@group(0) @binding(0) var<uniform> mu: Mask;

@vertex
fn vs_mask(@location(0) clip: vec4<f32>) -> @builtin(position) vec4<f32> {
    let vp = mu.viewport;
    let ax = vp.z / mu.size.x;
    let bx = (2.0 * vp.x + vp.z) / mu.size.x - 1.0;
    let ay = vp.w / mu.size.y;
    let by = (2.0 * vp.y + vp.w) / mu.size.y - 1.0;
    // Linear in (x, w), so clipping stays the GPU's; y flipped because wgpu's row 0 is the
    // top and the map's row 0 is GL's bottom; GL depth -w..w to wgpu's 0..w.
    return vec4<f32>(ax * clip.x + bx * clip.w, -(ay * clip.y + by * clip.w), (clip.z + clip.w) * 0.5, clip.w);
}

@fragment
fn fs_mask() -> @location(0) vec4<f32> {
    return vec4<f32>(1.0, 0.0, 0.0, 1.0);
}
