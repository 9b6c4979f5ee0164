//! Per-context VG state: parameters, matrices, errors and the objects (paths, paints,
//! images) the context created.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::consts::*;
use crate::matrix::Mat3;
use crate::path::PathData;
use crate::render::Renderer;

/// How a parameter's values are interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer or enum.
    Int,
    /// A float.
    Float,
    /// A VGboolean (stored as 0 or 1).
    Bool,
}

/// How many values a parameter holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// One value.
    Scalar,
    /// Exactly this many (a vector).
    Fixed(usize),
    /// Any count up to this many that is a multiple of `.1` (a variable-length vector).
    Var(usize, usize),
}

/// One parameter of the context or of a paint.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The `VG_*` parameter name.
    pub id: VGenum,
    /// Value interpretation.
    pub kind: Kind,
    /// Value count.
    pub len: Len,
    /// Setting it is ignored (the `VG_MAX_*` limits, `VG_SCREEN_LAYOUT`).
    pub read_only: bool,
    /// Allowed integer range (inclusive) for enums; `None`: any value.
    pub range: Option<(i32, i32)>,
    /// The initial value.
    pub default: &'static [f32],
}

const fn spec(
    id: VGenum,
    kind: Kind,
    len: Len,
    range: Option<(i32, i32)>,
    default: &'static [f32],
) -> Spec {
    Spec {
        id,
        kind,
        len,
        read_only: false,
        range,
        default,
    }
}

const fn limit(id: VGenum, default: &'static [f32]) -> Spec {
    Spec {
        id,
        kind: Kind::Int,
        len: Len::Scalar,
        read_only: true,
        range: None,
        default,
    }
}

use Kind::{Bool, Float, Int};
use Len::{Fixed, Scalar, Var};

/// The context parameters (`vgSet*` / `vgGet*`), with the specification's defaults.
pub const CONTEXT_PARAMS: &[Spec] = &[
    spec(
        VG_MATRIX_MODE,
        Int,
        Scalar,
        Some((0x1400, 0x1404)),
        &[0x1400 as f32],
    ),
    spec(
        VG_FILL_RULE,
        Int,
        Scalar,
        Some((0x1900, 0x1901)),
        &[0x1900 as f32],
    ),
    spec(VG_IMAGE_QUALITY, Int, Scalar, Some((1, 7)), &[2.0]),
    spec(
        VG_RENDERING_QUALITY,
        Int,
        Scalar,
        Some((0x1200, 0x1202)),
        &[0x1202 as f32],
    ),
    spec(
        VG_BLEND_MODE,
        Int,
        Scalar,
        Some((0x2000, 0x2009)),
        &[0x2001 as f32],
    ),
    spec(
        VG_IMAGE_MODE,
        Int,
        Scalar,
        Some((0x1F00, 0x1F02)),
        &[0x1F00 as f32],
    ),
    spec(
        VG_SCISSOR_RECTS,
        Int,
        Var(4 * MAX_SCISSOR_RECTS, 4),
        None,
        &[],
    ),
    spec(VG_COLOR_TRANSFORM, Bool, Scalar, None, &[0.0]),
    spec(
        VG_COLOR_TRANSFORM_VALUES,
        Float,
        Fixed(8),
        None,
        &[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    ),
    spec(VG_STROKE_LINE_WIDTH, Float, Scalar, None, &[1.0]),
    spec(
        VG_STROKE_CAP_STYLE,
        Int,
        Scalar,
        Some((0x1700, 0x1702)),
        &[0x1700 as f32],
    ),
    spec(
        VG_STROKE_JOIN_STYLE,
        Int,
        Scalar,
        Some((0x1800, 0x1802)),
        &[0x1800 as f32],
    ),
    spec(VG_STROKE_MITER_LIMIT, Float, Scalar, None, &[4.0]),
    spec(
        VG_STROKE_DASH_PATTERN,
        Float,
        Var(MAX_DASH_COUNT, 1),
        None,
        &[],
    ),
    spec(VG_STROKE_DASH_PHASE, Float, Scalar, None, &[0.0]),
    spec(VG_STROKE_DASH_PHASE_RESET, Bool, Scalar, None, &[0.0]),
    spec(
        VG_TILE_FILL_COLOR,
        Float,
        Fixed(4),
        None,
        &[0.0, 0.0, 0.0, 0.0],
    ),
    spec(VG_CLEAR_COLOR, Float, Fixed(4), None, &[0.0, 0.0, 0.0, 0.0]),
    spec(VG_GLYPH_ORIGIN, Float, Fixed(2), None, &[0.0, 0.0]),
    spec(VG_MASKING, Bool, Scalar, None, &[0.0]),
    spec(VG_SCISSORING, Bool, Scalar, None, &[0.0]),
    spec(
        VG_PIXEL_LAYOUT,
        Int,
        Scalar,
        Some((0x1300, 0x1304)),
        &[0x1300 as f32],
    ),
    Spec {
        read_only: true,
        ..spec(VG_SCREEN_LAYOUT, Int, Scalar, None, &[0x1300 as f32])
    },
    spec(VG_FILTER_FORMAT_LINEAR, Bool, Scalar, None, &[0.0]),
    spec(VG_FILTER_FORMAT_PREMULTIPLIED, Bool, Scalar, None, &[0.0]),
    spec(VG_FILTER_CHANNEL_MASK, Int, Scalar, None, &[15.0]),
    limit(VG_MAX_SCISSOR_RECTS, &[MAX_SCISSOR_RECTS as f32]),
    limit(VG_MAX_DASH_COUNT, &[MAX_DASH_COUNT as f32]),
    limit(VG_MAX_KERNEL_SIZE, &[7.0]),
    limit(VG_MAX_SEPARABLE_KERNEL_SIZE, &[15.0]),
    limit(VG_MAX_COLOR_RAMP_STOPS, &[MAX_COLOR_RAMP_STOPS as f32]),
    limit(VG_MAX_IMAGE_WIDTH, &[MAX_IMAGE_SIZE as f32]),
    limit(VG_MAX_IMAGE_HEIGHT, &[MAX_IMAGE_SIZE as f32]),
    limit(
        VG_MAX_IMAGE_PIXELS,
        &[(MAX_IMAGE_SIZE * MAX_IMAGE_SIZE) as f32],
    ),
    limit(
        VG_MAX_IMAGE_BYTES,
        &[(4 * MAX_IMAGE_SIZE * MAX_IMAGE_SIZE) as f32],
    ),
    Spec {
        kind: Float,
        ..limit(VG_MAX_FLOAT, &[f32::MAX])
    },
    Spec {
        kind: Float,
        ..limit(VG_MAX_GAUSSIAN_STD_DEVIATION, &[16.0])
    },
];

/// The paint parameters (`vgSetParameter*` on a paint), with their defaults.
pub const PAINT_PARAMS: &[Spec] = &[
    spec(
        VG_PAINT_TYPE,
        Int,
        Scalar,
        Some((0x1B00, 0x1B03)),
        &[0x1B00 as f32],
    ),
    spec(VG_PAINT_COLOR, Float, Fixed(4), None, &[0.0, 0.0, 0.0, 1.0]),
    spec(
        VG_PAINT_COLOR_RAMP_SPREAD_MODE,
        Int,
        Scalar,
        Some((0x1C00, 0x1C02)),
        &[0x1C00 as f32],
    ),
    spec(
        VG_PAINT_COLOR_RAMP_PREMULTIPLIED,
        Bool,
        Scalar,
        None,
        &[1.0],
    ),
    spec(
        VG_PAINT_COLOR_RAMP_STOPS,
        Float,
        Var(5 * MAX_COLOR_RAMP_STOPS, 5),
        None,
        &[],
    ),
    spec(
        VG_PAINT_LINEAR_GRADIENT,
        Float,
        Fixed(4),
        None,
        &[0.0, 0.0, 1.0, 0.0],
    ),
    spec(
        VG_PAINT_RADIAL_GRADIENT,
        Float,
        Fixed(5),
        None,
        &[0.0, 0.0, 0.0, 0.0, 1.0],
    ),
    spec(
        VG_PAINT_PATTERN_TILING_MODE,
        Int,
        Scalar,
        Some((0x1D00, 0x1D03)),
        &[0x1D00 as f32],
    ),
];

/// Parameter values by name, as floats (integers and enums are exact up to 2^24).
#[derive(Clone, Debug)]
pub struct Params {
    table: &'static [Spec],
    values: HashMap<VGenum, Vec<f32>>,
}

impl Params {
    /// Every parameter of `table` at its default.
    pub fn new(table: &'static [Spec]) -> Params {
        Params {
            table,
            values: table.iter().map(|s| (s.id, s.default.to_vec())).collect(),
        }
    }

    /// The spec of `id`, or an illegal-argument error.
    pub fn spec(&self, id: VGenum) -> Result<Spec, VGErrorCode> {
        self.table
            .iter()
            .find(|s| s.id == id)
            .copied()
            .ok_or(VG_ILLEGAL_ARGUMENT_ERROR)
    }

    /// Sets `id` from `values` (`vector`: through a `*v` call). Errors as the
    /// specification gives them: unknown name, a scalar call on a vector, a bad count, an
    /// enum out of range; read-only parameters ignore the call.
    pub fn set(&mut self, id: VGenum, vector: bool, values: &[f32]) -> Result<(), VGErrorCode> {
        let s = self.spec(id)?;
        let mut values: Vec<f32> = match s.len {
            Scalar if values.len() != 1 => return Err(VG_ILLEGAL_ARGUMENT_ERROR),
            Fixed(_) if !vector => return Err(VG_ILLEGAL_ARGUMENT_ERROR),
            Fixed(n) if values.len() != n => return Err(VG_ILLEGAL_ARGUMENT_ERROR),
            Var(_, multiple) if !vector || !values.len().is_multiple_of(multiple) => {
                return Err(VG_ILLEGAL_ARGUMENT_ERROR)
            }
            // Values past the maximum are ignored, as the specification says.
            Var(max, _) => values[..values.len().min(max)].to_vec(),
            _ => values.to_vec(),
        };
        for v in &mut values {
            *v = match s.kind {
                Int => v.floor(),
                Bool => f32::from(*v != 0.0),
                Float => *v,
            };
            if let Some((lo, hi)) = s.range {
                if !(lo as f32..=hi as f32).contains(v) {
                    return Err(VG_ILLEGAL_ARGUMENT_ERROR);
                }
            }
        }
        if !s.read_only {
            self.values.insert(id, values);
        }
        Ok(())
    }

    /// All values of `id` (empty for an unknown name).
    pub fn get(&self, id: VGenum) -> &[f32] {
        self.values.get(&id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The first value of `id` as an integer (0 when unset).
    pub fn int(&self, id: VGenum) -> i32 {
        self.get(id).first().map_or(0, |v| *v as i32)
    }

    /// The first value of `id` as a float (0 when unset).
    pub fn float(&self, id: VGenum) -> f32 {
        self.get(id).first().copied().unwrap_or(0.0)
    }
}

/// A paint object.
#[derive(Debug)]
pub struct Paint {
    /// Its parameters.
    pub params: Params,
    /// The pattern image (`vgPaintPattern`), 0 for none.
    pub pattern: VGImage,
    /// The GL texture holding the colour ramp (0 until first drawn with a gradient).
    pub ramp_texture: u32,
    /// The ramp stops changed since `ramp_texture` was filled.
    pub ramp_dirty: bool,
}

impl Paint {
    /// A paint at its defaults (opaque black colour paint).
    pub fn new() -> Paint {
        Paint {
            params: Params::new(PAINT_PARAMS),
            pattern: VG_INVALID_HANDLE,
            ramp_texture: 0,
            ramp_dirty: true,
        }
    }
}

impl Default for Paint {
    fn default() -> Self {
        Paint::new()
    }
}

/// An image object: a GL texture plus the pixels' CPU copy.
#[derive(Debug)]
pub struct Image {
    /// The format it was created with.
    pub format: VGenum,
    /// Width in pixels.
    pub width: i32,
    /// Height in pixels.
    pub height: i32,
    /// Non-premultiplied RGBA8, bottom row first (VG's and GL's image origin).
    pub pixels: Vec<u8>,
    /// The GL texture (RGBA8, nearest filtering).
    pub texture: u32,
    /// The image `vgChildImage` made this one from (`VG_INVALID_HANDLE`: none).
    pub parent: VGImage,
}

/// What a glyph draws.
#[derive(Clone, Debug)]
pub enum GlyphShape {
    /// A copy of the path given to `vgSetGlyphToPath` (`None`: an empty glyph).
    Path(Option<PathData>),
    /// The image given to `vgSetGlyphToImage` (`VG_INVALID_HANDLE`: an empty glyph).
    Image(VGImage),
}

/// One glyph of a font.
#[derive(Clone, Debug)]
pub struct Glyph {
    /// Its path or image.
    pub shape: GlyphShape,
    /// The glyph's own origin, placed at `VG_GLYPH_ORIGIN` when drawn.
    pub origin: [f32; 2],
    /// Added to `VG_GLYPH_ORIGIN` after drawing.
    pub escapement: [f32; 2],
}

/// A font object: glyphs by index.
#[derive(Clone, Debug, Default)]
pub struct Font {
    /// The glyphs defined so far.
    pub glyphs: HashMap<u32, Glyph>,
}

/// Triangles of a tessellated path: user-space vertices and indices.
pub type Mesh = lyon_tessellation::VertexBuffers<[f32; 2], u32>;

/// Everything VG keeps for one EGL context.
#[derive(Debug)]
pub struct Context {
    /// The first error since the last `vgGetError`.
    pub error: VGErrorCode,
    /// Context parameters.
    pub params: Params,
    /// The five matrices, indexed by `VG_MATRIX_*` − `VG_MATRIX_PATH_USER_TO_SURFACE`.
    pub matrices: [Mat3; 5],
    /// Paths by handle.
    pub paths: HashMap<VGHandle, PathData>,
    /// Paints by handle.
    pub paints: HashMap<VGHandle, Paint>,
    /// Images by handle.
    pub images: HashMap<VGHandle, Image>,
    /// Mask layers by handle: images whose every channel holds the mask value.
    pub mask_layers: HashMap<VGHandle, Image>,
    /// The paint used when none is set (`vgSetPaint(VG_INVALID_HANDLE, …)`).
    pub default_paint: Paint,
    /// The fill paint, 0 for the default.
    pub fill_paint: VGPaint,
    /// The stroke paint, 0 for the default.
    pub stroke_paint: VGPaint,
    /// The GL objects this context draws with.
    pub renderer: Renderer,
    /// The last tessellation of each path's fill (`.1` = 0) and stroke (1), with the hash
    /// of everything it depends on, so a path redrawn unchanged is not tessellated again.
    pub meshes: HashMap<(VGHandle, u32, u8), (u64, Mesh)>,
    /// Fonts by handle.
    pub fonts: HashMap<VGHandle, Font>,
}

/// Handles are unique across all contexts, so a handle of another context is a bad one.
static NEXT_HANDLE: AtomicU32 = AtomicU32::new(1);

/// A fresh object handle.
pub fn new_handle() -> VGHandle {
    NEXT_HANDLE.fetch_add(1, Ordering::Relaxed)
}

impl Context {
    /// A context at the specification's initial state.
    pub fn new() -> Context {
        Context {
            error: VG_NO_ERROR,
            params: Params::new(CONTEXT_PARAMS),
            matrices: [Mat3::IDENTITY; 5],
            paths: HashMap::new(),
            paints: HashMap::new(),
            images: HashMap::new(),
            mask_layers: HashMap::new(),
            default_paint: Paint::new(),
            fill_paint: VG_INVALID_HANDLE,
            stroke_paint: VG_INVALID_HANDLE,
            renderer: Renderer::default(),
            meshes: HashMap::new(),
            fonts: HashMap::new(),
        }
    }

    /// Records `e` unless an earlier error is still unread (the specification keeps the
    /// first one).
    pub fn set_error(&mut self, e: VGErrorCode) {
        if self.error == VG_NO_ERROR {
            self.error = e;
        }
    }

    /// The index of the current matrix mode in [`Context::matrices`].
    pub fn matrix_index(&self) -> usize {
        (self.params.int(VG_MATRIX_MODE) - VG_MATRIX_PATH_USER_TO_SURFACE).clamp(0, 4) as usize
    }

    /// The matrix of `mode` (`VG_MATRIX_*`).
    pub fn matrix(&self, mode: VGenum) -> Mat3 {
        self.matrices[(mode - VG_MATRIX_PATH_USER_TO_SURFACE).clamp(0, 4) as usize]
    }

    /// Sets the current matrix; every mode but the image one is affine.
    pub fn set_current_matrix(&mut self, m: Mat3) {
        let i = self.matrix_index();
        let image =
            i == (VG_MATRIX_IMAGE_USER_TO_SURFACE - VG_MATRIX_PATH_USER_TO_SURFACE) as usize;
        self.matrices[i] = if image { m } else { m.affine() };
    }

    /// The paint for `mode` (`VG_FILL_PATH` or `VG_STROKE_PATH`).
    pub fn paint(&self, mode: VGbitfield) -> &Paint {
        let h = if mode == VG_FILL_PATH {
            self.fill_paint
        } else {
            self.stroke_paint
        };
        self.paints.get(&h).unwrap_or(&self.default_paint)
    }
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_validate_kind_count_and_range() {
        let mut p = Params::new(CONTEXT_PARAMS);
        assert_eq!(p.int(VG_FILL_RULE), VG_EVEN_ODD);
        assert_eq!(p.set(VG_FILL_RULE, false, &[VG_NON_ZERO as f32]), Ok(()));
        assert_eq!(p.int(VG_FILL_RULE), VG_NON_ZERO);
        assert_eq!(
            p.set(VG_FILL_RULE, false, &[5.0]),
            Err(VG_ILLEGAL_ARGUMENT_ERROR)
        );
        assert_eq!(
            p.set(VG_CLEAR_COLOR, false, &[1.0]),
            Err(VG_ILLEGAL_ARGUMENT_ERROR)
        );
        assert_eq!(
            p.set(VG_SCISSOR_RECTS, true, &[1.0, 2.0, 3.0]),
            Err(VG_ILLEGAL_ARGUMENT_ERROR)
        );
        assert_eq!(p.set(0x7777, false, &[1.0]), Err(VG_ILLEGAL_ARGUMENT_ERROR));
        // Read-only: accepted and ignored.
        assert_eq!(p.set(VG_MAX_DASH_COUNT, false, &[3.0]), Ok(()));
        assert_eq!(p.int(VG_MAX_DASH_COUNT), MAX_DASH_COUNT as i32);
        assert_eq!(p.set(VG_SCISSORING, false, &[7.0]), Ok(()));
        assert_eq!(p.int(VG_SCISSORING), 1);
    }
}
