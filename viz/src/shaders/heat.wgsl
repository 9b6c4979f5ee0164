// The thermal map over the frame: one full-view triangle; each fragment finds its map pixel
// (nearest, GL rows bottom first), tints the frame's colour with the palette, and outlines
// the selected draw's mask.

struct Heat {
    // view width, height (pixels); map width, height
    size: vec4<f32>,
    // map x, y at the view's centre; view pixels per map pixel; outline width (view pixels)
    xform: vec4<f32>,
    // range low, high (map units); tint opacity; unused
    range: vec4<f32>,
    // log scale; Android layer mode; show the frame's colour; outline on
    flags: vec4<u32>,
    // colour of values above the range (opaque); w: 1 to use it
    clip: vec4<f32>,
};

@group(0) @binding(0) var<uniform> u: Heat;
@group(0) @binding(1) var values: texture_2d<f32>;
@group(0) @binding(2) var colour: texture_2d<f32>;
@group(0) @binding(3) var lut: texture_2d<f32>;
@group(0) @binding(4) var mask: texture_2d<f32>;

@vertex
fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4<f32> {
    let x = f32(i32(i & 1u) * 4 - 1);
    let y = f32(i32(i >> 1u) * 4 - 1);
    return vec4<f32>(x, y, 0.0, 1.0);
}

fn map_xy(view_px: vec2<f32>) -> vec2<f32> {
    let d = (view_px - u.size.xy * 0.5) / u.xform.z;
    return vec2<f32>(u.xform.x + d.x, u.xform.y - d.y);
}

fn inside(m: vec2<f32>) -> bool {
    return m.x >= 0.0 && m.y >= 0.0 && m.x < u.size.z && m.y < u.size.w;
}

fn masked(m: vec2<f32>) -> bool {
    if !inside(m) {
        return false;
    }
    return textureLoad(mask, vec2<i32>(floor(m)), 0).r > 0.5;
}

fn position(v: f32) -> f32 {
    let lo = u.range.x;
    let hi = u.range.y;
    if hi <= lo {
        return 1.0;
    }
    if u.flags.x != 0u {
        return clamp((log(1.0 + v) - log(1.0 + lo)) / (log(1.0 + hi) - log(1.0 + lo)), 0.0, 1.0);
    }
    return clamp((v - lo) / (hi - lo), 0.0, 1.0);
}

@fragment
fn fs(@builtin(position) p: vec4<f32>) -> @location(0) vec4<f32> {
    let m = map_xy(p.xy);
    var c: vec3<f32>;
    if !inside(m) {
        // A quiet checkerboard outside the frame, so its edge is plain.
        let cell = vec2<i32>(floor(p.xy / 12.0));
        let odd = ((cell.x + cell.y) & 1) == 1;
        c = select(vec3<f32>(0.11), vec3<f32>(0.14), odd);
    } else {
        let ip = vec2<i32>(floor(m));
        c = vec3<f32>(0.0);
        if u.flags.z != 0u {
            c = textureLoad(colour, ip, 0).rgb;
        }
        let v = textureLoad(values, ip, 0).r;
        if u.clip.w > 0.5 && u.flags.y == 0u && u.range.y > u.range.x && v > u.range.y {
            // Clipped by the range: marked, not blended.
            c = u.clip.rgb;
        } else if v > 0.0 && v >= u.range.x {
            var index: i32;
            if u.flags.y != 0u {
                index = (i32(clamp(round(v), 1.0, 4.0)) - 1) * 85;
            } else {
                index = i32(round(position(v) * 255.0));
            }
            let tint = textureLoad(lut, vec2<i32>(index, 0), 0).rgb;
            c = mix(c, tint, u.range.z);
        }
    }
    if u.flags.w != 0u {
        let o = u.xform.w / u.xform.z;
        let here = masked(m);
        var differs = false;
        for (var k = 0; k < 8; k++) {
            let a = f32(k) * 0.785398;
            if masked(m + vec2<f32>(cos(a), sin(a)) * o) != here {
                differs = true;
            }
        }
        if differs {
            c = select(vec3<f32>(0.0), vec3<f32>(1.0), here);
        }
    }
    return vec4<f32>(c, 1.0);
}
