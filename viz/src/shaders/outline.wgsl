// Outlines the selected draw in the 3D view from the ID target: pixels next to the draw's
// pixels (within two pixels) turn white; the draw's own pixels keep their colour.

struct Outline {
    // selected slot + 1, unused x3
    select: vec4<u32>,
};

@group(0) @binding(0) var<uniform> u: Outline;
@group(0) @binding(1) var ids: texture_2d<u32>;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let x = f32(i32(i & 1u) * 4 - 1);
    let y = f32(i32(i >> 1u) * 4 - 1);
    return vec4<f32>(x, y, 0.0, 1.0);
}

fn id_at(p: vec2<i32>) -> u32 {
    let size = vec2<i32>(textureDimensions(ids));
    if p.x < 0 || p.y < 0 || p.x >= size.x || p.y >= size.y {
        return 0u;
    }
    return textureLoad(ids, p, 0).r;
}

@fragment
fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let here = vec2<i32>(floor(p.xy));
    let sel = u.select.x;
    if id_at(here) == sel {
        discard;
    }
    for (var dy = -2; dy <= 2; dy++) {
        for (var dx = -2; dx <= 2; dx++) {
            if id_at(here + vec2<i32>(dx, dy)) == sel {
                return vec4<f32>(1.0, 1.0, 1.0, 1.0);
            }
        }
    }
    discard;
}
