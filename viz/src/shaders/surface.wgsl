// The heat map as a height field, lit from above and the camera's side.

struct Surface {
    view_proj: mat4x4<f32>,
    // direction to the light (world), unused
    light: vec4<f32>,
};

@group(0) @binding(0) var<uniform> u: Surface;

struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) colour: vec4<f32>,
    @location(1) normal: vec3<f32>,
};

@vertex
fn vs(@location(0) pos: vec3<f32>, @location(1) normal: vec3<f32>, @location(2) colour: vec4<f32>) -> Out {
    var o: Out;
    o.position = u.view_proj * vec4<f32>(pos, 1.0);
    o.colour = colour;
    o.normal = normal;
    return o;
}

@fragment
fn fs(i: Out) -> @location(0) vec4<f32> {
    let n = normalize(i.normal);
    let k = 0.45 + 0.55 * max(dot(n, normalize(u.light.xyz)), 0.0);
    return vec4<f32>(i.colour.rgb * k, 1.0);
}
