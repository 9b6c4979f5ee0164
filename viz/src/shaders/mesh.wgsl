// The frame's geometry in 3D: every draw's triangles from one vertex buffer, each vertex
// carrying its draw's slot, the slot's colour read from a texture (so recolouring writes
// one texel per draw), and the draw's slot + 1 written to an ID target for picking (0: nothing).

struct Mesh {
    view_proj: mat4x4<f32>,
    // window-space centre x, y; world units per pixel; depth scale
    world: vec4<f32>,
    // layer spacing (explode), dim factor of unselected draws, shade (0/1), unused
    params: vec4<f32>,
    // selected slot (0xffffffff: none), colour texture width, unused, unused
    select: vec4<u32>,
};

struct Out {
    @builtin(position) position: vec4<f32>,
    @location(0) colour: vec4<f32>,
    @location(1) world: vec3<f32>,
    @location(2) @interpolate(flat) call: u32,
};

@group(0) @binding(0) var<uniform> u: Mesh;
@group(0) @binding(1) var colours: texture_2d<f32>;

@vertex
fn vs(@location(0) pos: vec3<f32>, @location(1) slot: u32) -> Out {
    let w = u.select.y;
    let x = (pos.x - u.world.x) * u.world.z;
    let y = (pos.y - u.world.y) * u.world.z;
    let z = -pos.z * u.world.w + f32(slot) * u.params.x;
    var o: Out;
    o.world = vec3<f32>(x, y, z);
    o.position = u.view_proj * vec4<f32>(x, y, z, 1.0);
    var c = textureLoad(colours, vec2<i32>(i32(slot % w), i32(slot / w)), 0);
    if u.select.x != 0xffffffffu && slot != u.select.x {
        c = vec4<f32>(mix(vec3<f32>(0.16), c.rgb, u.params.y), 1.0);
    }
    o.colour = c;
    o.call = slot + 1u;
    return o;
}

struct Targets {
    @location(0) colour: vec4<f32>,
    @location(1) id: u32,
};

@fragment
fn fs(i: Out) -> Targets {
    var c = i.colour.rgb;
    if u.params.z != 0.0 {
        let n = normalize(cross(dpdx(i.world), dpdy(i.world)));
        c = c * (0.55 + 0.45 * abs(n.z));
    }
    var t: Targets;
    t.colour = vec4<f32>(c, 1.0);
    t.id = i.call;
    return t;
}
