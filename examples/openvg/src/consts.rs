//! OpenVG 1.1 and VGU 1.1 types and enum values, as in Khronos' `openvg.h` and `vgu.h`.

// The names are the C headers' own, and the OpenVG 1.1 specification documents each one.
#![allow(missing_docs, non_camel_case_types, non_upper_case_globals, dead_code)]

pub type VGfloat = f32;
pub type VGbyte = i8;
pub type VGubyte = u8;
pub type VGshort = i16;
pub type VGint = i32;
pub type VGuint = u32;
pub type VGbitfield = u32;
pub type VGboolean = u32;
pub type VGHandle = u32;
pub type VGPath = VGHandle;
pub type VGImage = VGHandle;
pub type VGPaint = VGHandle;
pub type VGenum = i32;
pub type VGErrorCode = VGenum;
pub type VGUErrorCode = VGenum;

pub const VG_FALSE: VGboolean = 0;
pub const VG_TRUE: VGboolean = 1;
pub const VG_INVALID_HANDLE: VGHandle = 0;
pub const VG_PATH_FORMAT_STANDARD: VGint = 0;

pub const VG_NO_ERROR: VGErrorCode = 0;
pub const VG_BAD_HANDLE_ERROR: VGErrorCode = 0x1000;
pub const VG_ILLEGAL_ARGUMENT_ERROR: VGErrorCode = 0x1001;
pub const VG_OUT_OF_MEMORY_ERROR: VGErrorCode = 0x1002;
pub const VG_PATH_CAPABILITY_ERROR: VGErrorCode = 0x1003;
pub const VG_UNSUPPORTED_IMAGE_FORMAT_ERROR: VGErrorCode = 0x1004;
pub const VG_UNSUPPORTED_PATH_FORMAT_ERROR: VGErrorCode = 0x1005;
pub const VG_IMAGE_IN_USE_ERROR: VGErrorCode = 0x1006;
pub const VG_NO_CONTEXT_ERROR: VGErrorCode = 0x1007;

// VGParamType
pub const VG_MATRIX_MODE: VGenum = 0x1100;
pub const VG_FILL_RULE: VGenum = 0x1101;
pub const VG_IMAGE_QUALITY: VGenum = 0x1102;
pub const VG_RENDERING_QUALITY: VGenum = 0x1103;
pub const VG_BLEND_MODE: VGenum = 0x1104;
pub const VG_IMAGE_MODE: VGenum = 0x1105;
pub const VG_SCISSOR_RECTS: VGenum = 0x1106;
pub const VG_COLOR_TRANSFORM: VGenum = 0x1170;
pub const VG_COLOR_TRANSFORM_VALUES: VGenum = 0x1171;
pub const VG_STROKE_LINE_WIDTH: VGenum = 0x1110;
pub const VG_STROKE_CAP_STYLE: VGenum = 0x1111;
pub const VG_STROKE_JOIN_STYLE: VGenum = 0x1112;
pub const VG_STROKE_MITER_LIMIT: VGenum = 0x1113;
pub const VG_STROKE_DASH_PATTERN: VGenum = 0x1114;
pub const VG_STROKE_DASH_PHASE: VGenum = 0x1115;
pub const VG_STROKE_DASH_PHASE_RESET: VGenum = 0x1116;
pub const VG_TILE_FILL_COLOR: VGenum = 0x1120;
pub const VG_CLEAR_COLOR: VGenum = 0x1121;
pub const VG_GLYPH_ORIGIN: VGenum = 0x1122;
pub const VG_MASKING: VGenum = 0x1130;
pub const VG_SCISSORING: VGenum = 0x1131;
pub const VG_PIXEL_LAYOUT: VGenum = 0x1140;
pub const VG_SCREEN_LAYOUT: VGenum = 0x1141;
pub const VG_FILTER_FORMAT_LINEAR: VGenum = 0x1150;
pub const VG_FILTER_FORMAT_PREMULTIPLIED: VGenum = 0x1151;
pub const VG_FILTER_CHANNEL_MASK: VGenum = 0x1152;
pub const VG_MAX_SCISSOR_RECTS: VGenum = 0x1160;
pub const VG_MAX_DASH_COUNT: VGenum = 0x1161;
pub const VG_MAX_KERNEL_SIZE: VGenum = 0x1162;
pub const VG_MAX_SEPARABLE_KERNEL_SIZE: VGenum = 0x1163;
pub const VG_MAX_COLOR_RAMP_STOPS: VGenum = 0x1164;
pub const VG_MAX_IMAGE_WIDTH: VGenum = 0x1165;
pub const VG_MAX_IMAGE_HEIGHT: VGenum = 0x1166;
pub const VG_MAX_IMAGE_PIXELS: VGenum = 0x1167;
pub const VG_MAX_IMAGE_BYTES: VGenum = 0x1168;
pub const VG_MAX_FLOAT: VGenum = 0x1169;
pub const VG_MAX_GAUSSIAN_STD_DEVIATION: VGenum = 0x116A;

pub const VG_RENDERING_QUALITY_NONANTIALIASED: VGenum = 0x1200;
pub const VG_RENDERING_QUALITY_FASTER: VGenum = 0x1201;
pub const VG_RENDERING_QUALITY_BETTER: VGenum = 0x1202;

pub const VG_PIXEL_LAYOUT_UNKNOWN: VGenum = 0x1300;
pub const VG_PIXEL_LAYOUT_BGR_HORIZONTAL: VGenum = 0x1304;

pub const VG_MATRIX_PATH_USER_TO_SURFACE: VGenum = 0x1400;
pub const VG_MATRIX_IMAGE_USER_TO_SURFACE: VGenum = 0x1401;
pub const VG_MATRIX_FILL_PAINT_TO_USER: VGenum = 0x1402;
pub const VG_MATRIX_STROKE_PAINT_TO_USER: VGenum = 0x1403;
pub const VG_MATRIX_GLYPH_USER_TO_SURFACE: VGenum = 0x1404;

pub const VG_PATH_DATATYPE_S_8: VGenum = 0;
pub const VG_PATH_DATATYPE_S_16: VGenum = 1;
pub const VG_PATH_DATATYPE_S_32: VGenum = 2;
pub const VG_PATH_DATATYPE_F: VGenum = 3;

pub const VG_ABSOLUTE: u8 = 0;
pub const VG_RELATIVE: u8 = 1;

pub const VG_CLOSE_PATH: u8 = 0 << 1;
pub const VG_MOVE_TO: u8 = 1 << 1;
pub const VG_LINE_TO: u8 = 2 << 1;
pub const VG_HLINE_TO: u8 = 3 << 1;
pub const VG_VLINE_TO: u8 = 4 << 1;
pub const VG_QUAD_TO: u8 = 5 << 1;
pub const VG_CUBIC_TO: u8 = 6 << 1;
pub const VG_SQUAD_TO: u8 = 7 << 1;
pub const VG_SCUBIC_TO: u8 = 8 << 1;
pub const VG_SCCWARC_TO: u8 = 9 << 1;
pub const VG_SCWARC_TO: u8 = 10 << 1;
pub const VG_LCCWARC_TO: u8 = 11 << 1;
pub const VG_LCWARC_TO: u8 = 12 << 1;

pub const VG_MOVE_TO_ABS: u8 = VG_MOVE_TO | VG_ABSOLUTE;
pub const VG_MOVE_TO_REL: u8 = VG_MOVE_TO | VG_RELATIVE;
pub const VG_LINE_TO_ABS: u8 = VG_LINE_TO | VG_ABSOLUTE;
pub const VG_LINE_TO_REL: u8 = VG_LINE_TO | VG_RELATIVE;
pub const VG_HLINE_TO_ABS: u8 = VG_HLINE_TO | VG_ABSOLUTE;
pub const VG_HLINE_TO_REL: u8 = VG_HLINE_TO | VG_RELATIVE;
pub const VG_VLINE_TO_ABS: u8 = VG_VLINE_TO | VG_ABSOLUTE;
pub const VG_VLINE_TO_REL: u8 = VG_VLINE_TO | VG_RELATIVE;
pub const VG_QUAD_TO_ABS: u8 = VG_QUAD_TO | VG_ABSOLUTE;
pub const VG_QUAD_TO_REL: u8 = VG_QUAD_TO | VG_RELATIVE;
pub const VG_CUBIC_TO_ABS: u8 = VG_CUBIC_TO | VG_ABSOLUTE;
pub const VG_CUBIC_TO_REL: u8 = VG_CUBIC_TO | VG_RELATIVE;
pub const VG_SQUAD_TO_ABS: u8 = VG_SQUAD_TO | VG_ABSOLUTE;
pub const VG_SQUAD_TO_REL: u8 = VG_SQUAD_TO | VG_RELATIVE;
pub const VG_SCUBIC_TO_ABS: u8 = VG_SCUBIC_TO | VG_ABSOLUTE;
pub const VG_SCUBIC_TO_REL: u8 = VG_SCUBIC_TO | VG_RELATIVE;
pub const VG_SCCWARC_TO_ABS: u8 = VG_SCCWARC_TO | VG_ABSOLUTE;
pub const VG_SCCWARC_TO_REL: u8 = VG_SCCWARC_TO | VG_RELATIVE;
pub const VG_SCWARC_TO_ABS: u8 = VG_SCWARC_TO | VG_ABSOLUTE;
pub const VG_SCWARC_TO_REL: u8 = VG_SCWARC_TO | VG_RELATIVE;
pub const VG_LCCWARC_TO_ABS: u8 = VG_LCCWARC_TO | VG_ABSOLUTE;
pub const VG_LCCWARC_TO_REL: u8 = VG_LCCWARC_TO | VG_RELATIVE;
pub const VG_LCWARC_TO_ABS: u8 = VG_LCWARC_TO | VG_ABSOLUTE;
pub const VG_LCWARC_TO_REL: u8 = VG_LCWARC_TO | VG_RELATIVE;

pub const VG_PATH_CAPABILITY_APPEND_FROM: VGbitfield = 1 << 0;
pub const VG_PATH_CAPABILITY_APPEND_TO: VGbitfield = 1 << 1;
pub const VG_PATH_CAPABILITY_MODIFY: VGbitfield = 1 << 2;
pub const VG_PATH_CAPABILITY_TRANSFORM_FROM: VGbitfield = 1 << 3;
pub const VG_PATH_CAPABILITY_TRANSFORM_TO: VGbitfield = 1 << 4;
pub const VG_PATH_CAPABILITY_INTERPOLATE_FROM: VGbitfield = 1 << 5;
pub const VG_PATH_CAPABILITY_INTERPOLATE_TO: VGbitfield = 1 << 6;
pub const VG_PATH_CAPABILITY_PATH_LENGTH: VGbitfield = 1 << 7;
pub const VG_PATH_CAPABILITY_POINT_ALONG_PATH: VGbitfield = 1 << 8;
pub const VG_PATH_CAPABILITY_TANGENT_ALONG_PATH: VGbitfield = 1 << 9;
pub const VG_PATH_CAPABILITY_PATH_BOUNDS: VGbitfield = 1 << 10;
pub const VG_PATH_CAPABILITY_PATH_TRANSFORMED_BOUNDS: VGbitfield = 1 << 11;
pub const VG_PATH_CAPABILITY_ALL: VGbitfield = (1 << 12) - 1;

pub const VG_PATH_FORMAT: VGenum = 0x1600;
pub const VG_PATH_DATATYPE: VGenum = 0x1601;
pub const VG_PATH_SCALE: VGenum = 0x1602;
pub const VG_PATH_BIAS: VGenum = 0x1603;
pub const VG_PATH_NUM_SEGMENTS: VGenum = 0x1604;
pub const VG_PATH_NUM_COORDS: VGenum = 0x1605;

pub const VG_CAP_BUTT: VGenum = 0x1700;
pub const VG_CAP_ROUND: VGenum = 0x1701;
pub const VG_CAP_SQUARE: VGenum = 0x1702;

pub const VG_JOIN_MITER: VGenum = 0x1800;
pub const VG_JOIN_ROUND: VGenum = 0x1801;
pub const VG_JOIN_BEVEL: VGenum = 0x1802;

pub const VG_EVEN_ODD: VGenum = 0x1900;
pub const VG_NON_ZERO: VGenum = 0x1901;

pub const VG_STROKE_PATH: VGbitfield = 1 << 0;
pub const VG_FILL_PATH: VGbitfield = 1 << 1;

pub const VG_PAINT_TYPE: VGenum = 0x1A00;
pub const VG_PAINT_COLOR: VGenum = 0x1A01;
pub const VG_PAINT_COLOR_RAMP_SPREAD_MODE: VGenum = 0x1A02;
pub const VG_PAINT_COLOR_RAMP_PREMULTIPLIED: VGenum = 0x1A07;
pub const VG_PAINT_COLOR_RAMP_STOPS: VGenum = 0x1A03;
pub const VG_PAINT_LINEAR_GRADIENT: VGenum = 0x1A04;
pub const VG_PAINT_RADIAL_GRADIENT: VGenum = 0x1A05;
pub const VG_PAINT_PATTERN_TILING_MODE: VGenum = 0x1A06;

pub const VG_PAINT_TYPE_COLOR: VGenum = 0x1B00;
pub const VG_PAINT_TYPE_LINEAR_GRADIENT: VGenum = 0x1B01;
pub const VG_PAINT_TYPE_RADIAL_GRADIENT: VGenum = 0x1B02;
pub const VG_PAINT_TYPE_PATTERN: VGenum = 0x1B03;

pub const VG_COLOR_RAMP_SPREAD_PAD: VGenum = 0x1C00;
pub const VG_COLOR_RAMP_SPREAD_REPEAT: VGenum = 0x1C01;
pub const VG_COLOR_RAMP_SPREAD_REFLECT: VGenum = 0x1C02;

pub const VG_TILE_FILL: VGenum = 0x1D00;
pub const VG_TILE_PAD: VGenum = 0x1D01;
pub const VG_TILE_REPEAT: VGenum = 0x1D02;
pub const VG_TILE_REFLECT: VGenum = 0x1D03;

pub const VG_sRGBX_8888: VGenum = 0;
pub const VG_sRGBA_8888: VGenum = 1;
pub const VG_sRGBA_8888_PRE: VGenum = 2;
pub const VG_lRGBX_8888: VGenum = 7;
pub const VG_lRGBA_8888: VGenum = 8;
pub const VG_lRGBA_8888_PRE: VGenum = 9;
pub const VG_sABGR_8888: VGenum = 1 | (1 << 6) | (1 << 7);

pub const VG_IMAGE_QUALITY_NONANTIALIASED: VGbitfield = 1 << 0;
pub const VG_IMAGE_QUALITY_FASTER: VGbitfield = 1 << 1;
pub const VG_IMAGE_QUALITY_BETTER: VGbitfield = 1 << 2;

pub const VG_IMAGE_FORMAT: VGenum = 0x1E00;
pub const VG_IMAGE_WIDTH: VGenum = 0x1E01;
pub const VG_IMAGE_HEIGHT: VGenum = 0x1E02;

pub const VG_DRAW_IMAGE_NORMAL: VGenum = 0x1F00;
pub const VG_DRAW_IMAGE_MULTIPLY: VGenum = 0x1F01;
pub const VG_DRAW_IMAGE_STENCIL: VGenum = 0x1F02;

pub const VG_BLEND_SRC: VGenum = 0x2000;
pub const VG_BLEND_SRC_OVER: VGenum = 0x2001;
pub const VG_BLEND_DST_OVER: VGenum = 0x2002;
pub const VG_BLEND_SRC_IN: VGenum = 0x2003;
pub const VG_BLEND_DST_IN: VGenum = 0x2004;
pub const VG_BLEND_MULTIPLY: VGenum = 0x2005;
pub const VG_BLEND_SCREEN: VGenum = 0x2006;
pub const VG_BLEND_DARKEN: VGenum = 0x2007;
pub const VG_BLEND_LIGHTEN: VGenum = 0x2008;
pub const VG_BLEND_ADDITIVE: VGenum = 0x2009;

pub const VG_CLEAR_MASK: VGenum = 0x1500;
pub const VG_FILL_MASK: VGenum = 0x1501;
pub const VG_SET_MASK: VGenum = 0x1502;
pub const VG_UNION_MASK: VGenum = 0x1503;
pub const VG_INTERSECT_MASK: VGenum = 0x1504;
pub const VG_SUBTRACT_MASK: VGenum = 0x1505;

pub type VGMaskLayer = VGHandle;
pub type VGFont = VGHandle;
pub const VG_FONT_NUM_GLYPHS: VGenum = 0x2F00;

pub const VG_VENDOR: VGenum = 0x2300;
pub const VG_RENDERER: VGenum = 0x2301;
pub const VG_VERSION: VGenum = 0x2302;
pub const VG_EXTENSIONS: VGenum = 0x2303;

pub const VGU_NO_ERROR: VGUErrorCode = 0;
pub const VGU_BAD_HANDLE_ERROR: VGUErrorCode = 0xF000;
pub const VGU_ILLEGAL_ARGUMENT_ERROR: VGUErrorCode = 0xF001;
pub const VGU_OUT_OF_MEMORY_ERROR: VGUErrorCode = 0xF002;
pub const VGU_PATH_CAPABILITY_ERROR: VGUErrorCode = 0xF003;
pub const VGU_BAD_WARP_ERROR: VGUErrorCode = 0xF004;

pub const VGU_ARC_OPEN: VGenum = 0xF100;
pub const VGU_ARC_CHORD: VGenum = 0xF101;
pub const VGU_ARC_PIE: VGenum = 0xF102;

/// The limits this implementation reports (`VG_MAX_*`).
pub const MAX_SCISSOR_RECTS: usize = 32;
/// See [`MAX_SCISSOR_RECTS`].
pub const MAX_DASH_COUNT: usize = 16;
/// See [`MAX_SCISSOR_RECTS`].
pub const MAX_COLOR_RAMP_STOPS: usize = 32;
/// See [`MAX_SCISSOR_RECTS`].
pub const MAX_IMAGE_SIZE: i32 = 4096;
