//! The orbit camera of the 3D views and the little matrix algebra it needs (column-major
//! 4×4, right-handed, depth 0..1 as wgpu clips).

/// Column-major 4×4 matrix, as WGSL's `mat4x4<f32>` reads it.
pub type Mat4 = [[f32; 4]; 4];

/// Orbits a target point: drag to rotate, wheel to zoom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    /// Rotation around the vertical axis, radians.
    pub yaw: f32,
    /// Elevation above the target's horizontal plane, radians.
    pub pitch: f32,
    /// Distance from the target.
    pub distance: f32,
    pub target: [f32; 3],
    /// Vertical field of view, radians.
    pub fov_y: f32,
}

impl OrbitCamera {
    /// Looking at the origin from `distance` at a slight angle, so depth reads at once.
    pub fn new(yaw: f32, pitch: f32, distance: f32) -> OrbitCamera {
        OrbitCamera {
            yaw,
            pitch,
            distance,
            target: [0.0; 3],
            fov_y: 45f32.to_radians(),
        }
    }

    /// Rotates by a mouse drag of `dx`, `dy` pixels.
    pub fn drag(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        let limit = 89f32.to_radians();
        self.pitch = (self.pitch + dy * 0.008).clamp(-limit, limit);
    }

    /// Zooms by a wheel delta (points; positive is towards the target).
    pub fn zoom(&mut self, delta: f32) {
        self.distance = (self.distance * (-delta * 0.002).exp()).clamp(0.05, 100.0);
    }

    fn eye(&self, distance: f32) -> [f32; 3] {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        let t = self.target;
        // Yaw 0, pitch 0 looks down -z: the frame's image as the program showed it.
        [
            t[0] + distance * cp * sy,
            t[1] + distance * sp,
            t[2] + distance * cp * cy,
        ]
    }

    /// Projection × view for a viewport of the given aspect (width / height). A view
    /// narrower than square moves the eye back, so what fits a square view fits it too.
    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        let aspect = aspect.max(1e-3);
        let distance = self.distance / aspect.min(1.0);
        let near = (distance * 0.01).max(1e-3);
        let far = distance * 10.0 + 10.0;
        mul(
            &perspective(self.fov_y, aspect, near, far),
            &look_at(self.eye(distance), self.target, [0.0, 1.0, 0.0]),
        )
    }
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn normalize(a: [f32; 3]) -> [f32; 3] {
    let l = dot(a, a).sqrt().max(1e-12);
    [a[0] / l, a[1] / l, a[2] / l]
}

/// Right-handed view matrix.
pub fn look_at(eye: [f32; 3], target: [f32; 3], up: [f32; 3]) -> Mat4 {
    let f = normalize(sub(target, eye));
    let s = normalize(cross(f, up));
    let u = cross(s, f);
    [
        [s[0], u[0], -f[0], 0.0],
        [s[1], u[1], -f[1], 0.0],
        [s[2], u[2], -f[2], 0.0],
        [-dot(s, eye), -dot(u, eye), dot(f, eye), 1.0],
    ]
}

/// Right-handed perspective projection with depth 0 at `near` and 1 at `far`.
pub fn perspective(fov_y: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
    let f = 1.0 / (fov_y / 2.0).tan();
    let r = far / (near - far);
    [
        [f / aspect, 0.0, 0.0, 0.0],
        [0.0, f, 0.0, 0.0],
        [0.0, 0.0, r, -1.0],
        [0.0, 0.0, r * near, 0.0],
    ]
}

/// `a × b`.
pub fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut m = [[0.0; 4]; 4];
    for (c, col) in m.iter_mut().enumerate() {
        for (r, v) in col.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[k][r] * b[c][k]).sum();
        }
    }
    m
}

/// `m × (x, y, z, 1)`, as clip coordinates.
#[cfg(test)]
pub fn transform(m: &Mat4, p: [f32; 3]) -> [f32; 4] {
    let mut out = [0.0; 4];
    for (r, o) in out.iter_mut().enumerate() {
        *o = m[0][r] * p[0] + m[1][r] * p[1] + m[2][r] * p[2] + m[3][r];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_projects_to_the_centre_and_depth_is_in_range() {
        let cam = OrbitCamera::new(0.3, 0.4, 3.0);
        let c = transform(&cam.view_proj(1.5), [0.0; 3]);
        assert!((c[0] / c[3]).abs() < 1e-5 && (c[1] / c[3]).abs() < 1e-5);
        let z = c[2] / c[3];
        assert!((0.0..1.0).contains(&z), "{z}");
    }

    #[test]
    fn yaw_zero_looks_down_minus_z_with_x_to_the_right() {
        let cam = OrbitCamera::new(0.0, 0.0, 3.0);
        let m = cam.view_proj(1.0);
        let right = transform(&m, [0.5, 0.0, 0.0]);
        let up = transform(&m, [0.0, 0.5, 0.0]);
        assert!(right[0] / right[3] > 0.1);
        assert!(up[1] / up[3] > 0.1);
    }
}
