//! The OpenVG 1.1 / VGU 1.1 table (`openvg.xml`) read through the registry parser: every
//! function of openvg.h and vgu.h, exact signatures, classified types, enum groups and values.

use gpuheat_registry::{CType, Command, Family, Registry};
use std::collections::HashSet;

/// Every function of OpenVG 1.1's openvg.h, in the order of the specification's header
/// (Appendix: `openvg.h`), counted independently of the table.
const OPENVG_H: [&str; 87] = [
    "vgGetError",
    "vgFlush",
    "vgFinish",
    "vgSetf",
    "vgSeti",
    "vgSetfv",
    "vgSetiv",
    "vgGetf",
    "vgGeti",
    "vgGetVectorSize",
    "vgGetfv",
    "vgGetiv",
    "vgSetParameterf",
    "vgSetParameteri",
    "vgSetParameterfv",
    "vgSetParameteriv",
    "vgGetParameterf",
    "vgGetParameteri",
    "vgGetParameterVectorSize",
    "vgGetParameterfv",
    "vgGetParameteriv",
    "vgLoadIdentity",
    "vgLoadMatrix",
    "vgGetMatrix",
    "vgMultMatrix",
    "vgTranslate",
    "vgScale",
    "vgShear",
    "vgRotate",
    "vgMask",
    "vgRenderToMask",
    "vgCreateMaskLayer",
    "vgDestroyMaskLayer",
    "vgFillMaskLayer",
    "vgCopyMask",
    "vgClear",
    "vgCreatePath",
    "vgClearPath",
    "vgDestroyPath",
    "vgRemovePathCapabilities",
    "vgGetPathCapabilities",
    "vgAppendPath",
    "vgAppendPathData",
    "vgModifyPathCoords",
    "vgTransformPath",
    "vgInterpolatePath",
    "vgPathLength",
    "vgPointAlongPath",
    "vgPathBounds",
    "vgPathTransformedBounds",
    "vgDrawPath",
    "vgCreatePaint",
    "vgDestroyPaint",
    "vgSetPaint",
    "vgGetPaint",
    "vgSetColor",
    "vgGetColor",
    "vgPaintPattern",
    "vgCreateImage",
    "vgDestroyImage",
    "vgClearImage",
    "vgImageSubData",
    "vgGetImageSubData",
    "vgChildImage",
    "vgGetParent",
    "vgCopyImage",
    "vgDrawImage",
    "vgSetPixels",
    "vgWritePixels",
    "vgGetPixels",
    "vgReadPixels",
    "vgCopyPixels",
    "vgCreateFont",
    "vgDestroyFont",
    "vgSetGlyphToPath",
    "vgSetGlyphToImage",
    "vgClearGlyph",
    "vgDrawGlyph",
    "vgDrawGlyphs",
    "vgColorMatrix",
    "vgConvolve",
    "vgSeparableConvolve",
    "vgGaussianBlur",
    "vgLookup",
    "vgLookupSingle",
    "vgHardwareQuery",
    "vgGetString",
];

/// Every function of VGU 1.1's vgu.h.
const VGU_H: [&str; 9] = [
    "vguLine",
    "vguPolygon",
    "vguRect",
    "vguRoundRect",
    "vguEllipse",
    "vguArc",
    "vguComputeWarpQuadToSquare",
    "vguComputeWarpSquareToQuad",
    "vguComputeWarpQuadToQuad",
];

fn vg() -> Registry {
    Registry::load_vg().unwrap()
}

/// `(C type, name, len, group, handle)` of each parameter, for exact comparisons.
type Sig<'a> = Vec<(
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
)>;

fn sig(c: &Command) -> Sig<'_> {
    c.params
        .iter()
        .map(|p| {
            (
                p.c_type.as_str(),
                p.name.as_str(),
                p.len.as_deref(),
                p.group.as_deref(),
                p.handle.as_deref(),
            )
        })
        .collect()
}

fn types(c: &Command) -> Vec<CType> {
    c.params.iter().map(|p| p.ty).collect()
}

#[test]
fn every_function_of_openvg_h_and_vgu_h_exactly() {
    let reg = vg();
    assert!(reg.skipped.is_empty(), "{:?}", reg.skipped);
    let names = |family| -> HashSet<&str> {
        reg.commands
            .iter()
            .filter(|c| c.family == family)
            .map(|c| c.name.as_str())
            .collect()
    };
    let (vg, vgu) = (names(Family::Vg), names(Family::Vgu));
    assert_eq!(vg.len(), 87);
    assert_eq!(vgu.len(), 9);
    assert_eq!(reg.commands.len(), 87 + 9, "only VG and VGU commands");
    assert_eq!(vg, HashSet::from(OPENVG_H));
    assert_eq!(vgu, HashSet::from(VGU_H));
    for name in OPENVG_H.iter().chain(&VGU_H) {
        assert_eq!(reg.command(name).map(|c| c.name.as_str()), Some(*name));
    }
}

#[test]
fn signatures_are_exact() {
    let reg = vg();
    let cmd = |name| reg.command(name).unwrap();

    let draw = cmd("vgDrawPath");
    assert_eq!(draw.ret, CType::Void);
    assert_eq!(
        sig(draw),
        [
            ("VGPath", "path", None, None, Some("VGPath")),
            ("VGbitfield", "paintModes", None, Some("VGPaintMode"), None),
        ]
    );
    assert_eq!(types(draw), [CType::Handle, CType::Bitfield]);

    let append = cmd("vgAppendPathData");
    assert_eq!(
        sig(append),
        [
            ("VGPath", "dstPath", None, None, Some("VGPath")),
            ("VGint", "numSegments", None, None, None),
            (
                "const VGubyte *",
                "pathSegments",
                Some("numSegments"),
                Some("VGPathCommand"),
                None
            ),
            (
                "const void *",
                "pathData",
                Some("COMPSIZE(dstPath,numSegments,pathSegments)"),
                None,
                None
            ),
        ]
    );
    assert_eq!(
        types(append),
        [CType::Handle, CType::I32, CType::Ptr, CType::Ptr]
    );

    let setfv = cmd("vgSetfv");
    assert_eq!(
        sig(setfv),
        [
            ("VGParamType", "paramType", None, Some("VGParamType"), None),
            ("VGint", "count", None, None, None),
            ("const VGfloat *", "values", Some("count"), None, None),
        ]
    );
    assert_eq!(types(setfv), [CType::Enum, CType::I32, CType::Ptr]);

    let clear = cmd("vgClear");
    assert_eq!(
        sig(clear),
        [
            ("VGint", "x", None, None, None),
            ("VGint", "y", None, None, None),
            ("VGint", "width", None, None, None),
            ("VGint", "height", None, None, None),
        ]
    );
    assert_eq!(types(clear), [CType::I32; 4]);

    // Floats travel in vector registers: the class decides the calling convention.
    let setf = cmd("vgSetf");
    assert_eq!(types(setf), [CType::Enum, CType::F32]);
    assert_eq!(cmd("vgGetf").ret, CType::F32);
    assert_eq!(cmd("vgPathLength").ret, CType::F32);
    assert_eq!(types(cmd("vgTranslate")), [CType::F32; 2]);

    // Handles come back from the create calls.
    let create = cmd("vgCreatePath");
    assert_eq!(
        (create.ret, create.ret_c_type.as_str()),
        (CType::Handle, "VGPath")
    );
    assert_eq!(create.ret_handle.as_deref(), Some("VGPath"));
    assert_eq!(
        types(create),
        [
            CType::I32,
            CType::Enum,
            CType::F32,
            CType::F32,
            CType::I32,
            CType::I32,
            CType::Bitfield
        ]
    );
    assert_eq!(create.params[0].group.as_deref(), Some("VGPathFormat"));
    assert_eq!(
        create.params[6].group.as_deref(),
        Some("VGPathCapabilities")
    );
    for (name, handle) in [
        ("vgCreateImage", "VGImage"),
        ("vgChildImage", "VGImage"),
        ("vgGetParent", "VGImage"),
        ("vgCreatePaint", "VGPaint"),
        ("vgGetPaint", "VGPaint"),
        ("vgCreateMaskLayer", "VGMaskLayer"),
        ("vgCreateFont", "VGFont"),
    ] {
        assert_eq!(cmd(name).ret_handle.as_deref(), Some(handle), "{name}");
    }
    // vgMask takes an image or a mask layer: the untyped VGHandle.
    assert_eq!(cmd("vgMask").params[0].handle.as_deref(), Some("VGHandle"));

    let error = cmd("vgGetError");
    assert_eq!(
        (error.ret, error.ret_group.as_deref()),
        (CType::Enum, Some("VGErrorCode"))
    );
    assert!(error.params.is_empty());
    let string = cmd("vgGetString");
    assert_eq!(
        (string.ret, string.ret_c_type.as_str()),
        (CType::Ptr, "const VGubyte *")
    );
    assert_eq!(cmd("vgInterpolatePath").ret, CType::Bool32);

    let glyphs = cmd("vgDrawGlyphs");
    let lens: Vec<_> = glyphs.params.iter().map(|p| p.len.as_deref()).collect();
    assert_eq!(
        lens,
        [
            None,
            None,
            Some("glyphCount"),
            Some("glyphCount"),
            Some("glyphCount"),
            None,
            None
        ]
    );
    assert_eq!(
        cmd("vgConvolve").params[6].len.as_deref(),
        Some("kernelWidth*kernelHeight")
    );
    assert_eq!(cmd("vgSetGlyphToPath").params[4].c_type, "const VGfloat *");
    assert_eq!(cmd("vgSetGlyphToPath").params[4].len.as_deref(), Some("2"));
    assert_eq!(cmd("vgLoadMatrix").params[0].len.as_deref(), Some("9"));
    assert_eq!(cmd("vgColorMatrix").params[2].len.as_deref(), Some("20"));

    let polygon = cmd("vguPolygon");
    assert_eq!(polygon.ret_group.as_deref(), Some("VGUErrorCode"));
    assert_eq!(
        sig(polygon),
        [
            ("VGPath", "path", None, None, Some("VGPath")),
            ("const VGfloat *", "points", Some("2*count"), None, None),
            ("VGint", "count", None, None, None),
            ("VGboolean", "closed", None, Some("VGboolean"), None),
        ]
    );
    assert_eq!(
        types(polygon),
        [CType::Handle, CType::Ptr, CType::I32, CType::Bool32]
    );
    // 16 floats and a pointer: more arguments than fit in registers (8 vector registers).
    let quad = cmd("vguComputeWarpQuadToQuad");
    assert_eq!(quad.params.len(), 17);
    assert!(quad.params[..16].iter().all(|p| p.ty == CType::F32));
    assert_eq!(quad.params[16].ty, CType::Ptr);
    assert_eq!(quad.params[16].len.as_deref(), Some("9"));
    assert_eq!(
        types(cmd("vguArc")).last(),
        Some(&CType::Enum),
        "VGUArcType arcType"
    );
}

#[test]
fn every_type_is_classified_and_every_enum_parameter_has_a_group() {
    let reg = vg();
    let groups: HashSet<&str> = reg.groups.iter().map(|g| g.name.as_str()).collect();
    let mut classes = HashSet::new();
    for c in &reg.commands {
        for p in &c.params {
            classes.insert(p.ty);
            if let Some(g) = &p.group {
                assert!(groups.contains(g.as_str()), "{}.{}: {g}", c.name, p.name);
            }
            // A parameter of a C enum type names that type as its group.
            if p.ty == CType::Enum || p.ty == CType::Bool32 {
                assert_eq!(
                    p.group.as_deref(),
                    Some(p.c_type.as_str()),
                    "{}.{}",
                    c.name,
                    p.name
                );
            }
            // Only the handle types are handles, passed pointer-sized whatever the library
            // made them (a VGuint in Khronos' header, a pointer in ShivaVG's).
            let is_handle = matches!(
                p.c_type.as_str(),
                "VGHandle" | "VGPath" | "VGImage" | "VGMaskLayer" | "VGFont" | "VGPaint"
            );
            assert_eq!(p.handle.is_some(), is_handle, "{}.{}", c.name, p.name);
            if is_handle {
                assert_eq!(p.ty, CType::Handle, "{}.{}", c.name, p.name);
            }
            // Arrays say how long they are; scalars don't.
            assert_eq!(
                p.len.is_some(),
                p.ty == CType::Ptr,
                "{}.{} len",
                c.name,
                p.name
            );
        }
        if let Some(g) = &c.ret_group {
            assert!(groups.contains(g.as_str()), "{} returns {g}", c.name);
        }
    }
    // VG uses no 8-bit boolean, no 64-bit integer and no double.
    for absent in [CType::Bool8, CType::I64, CType::U64, CType::F64] {
        assert!(!classes.contains(&absent), "{absent:?}");
    }
}

#[test]
fn groups_name_defined_enums() {
    let reg = vg();
    let enums: HashSet<&str> = reg.enums.iter().map(|e| e.name.as_str()).collect();
    for g in &reg.groups {
        assert!(!g.members.is_empty(), "{}", g.name);
        for m in &g.members {
            assert!(enums.contains(m.as_str()), "{} in {}", m, g.name);
        }
    }
    // Every value but the limits and version macros is in the group of its C enum type.
    let grouped: HashSet<&str> = reg
        .groups
        .iter()
        .filter(|g| g.name != "VGObjectParamType")
        .flat_map(|g| g.members.iter().map(String::as_str))
        .collect();
    let mut ungrouped: Vec<_> = enums.difference(&grouped).copied().collect();
    ungrouped.sort_unstable();
    assert_eq!(
        ungrouped,
        [
            "OPENVG_VERSION_1_0",
            "OPENVG_VERSION_1_0_1",
            "OPENVG_VERSION_1_1",
            "VGU_VERSION_1_0",
            "VGU_VERSION_1_1",
            "VG_INVALID_HANDLE",
            "VG_MAXINT",
            "VG_MAXSHORT",
            "VG_MAX_ENUM",
        ]
    );
    let group = |name: &str| {
        reg.groups
            .iter()
            .find(|g| g.name == name)
            .unwrap_or_else(|| panic!("no group {name}"))
    };
    assert_eq!(group("VGParamType").members.len(), 37);
    assert_eq!(group("VGPathCommand").members.len(), 24);
    assert_eq!(group("VGImageFormat").members.len(), 40);
    assert_eq!(group("VGBlendMode").members.len(), 10);
    // The object parameters of vgSetParameter*: path 6, paint 8, image 3, font 1.
    assert_eq!(group("VGObjectParamType").members.len(), 18);
}

#[test]
fn enum_values_are_exact() {
    let reg = vg();
    let value = |name: &str| {
        let found: Vec<_> = reg.enums.iter().filter(|e| e.name == name).collect();
        assert_eq!(found.len(), 1, "{name} defined once");
        (found[0].value, found[0].bitmask)
    };
    for (name, v) in [
        ("VG_NO_ERROR", 0),
        ("VG_NO_CONTEXT_ERROR", 0x1007),
        ("VG_MATRIX_MODE", 0x1100),
        ("VG_SCISSOR_RECTS", 0x1106),
        ("VG_COLOR_TRANSFORM", 0x1170),
        ("VG_STROKE_LINE_WIDTH", 0x1110),
        ("VG_GLYPH_ORIGIN", 0x1122),
        ("VG_MAX_GAUSSIAN_STD_DEVIATION", 0x116A),
        ("VG_MATRIX_GLYPH_USER_TO_SURFACE", 0x1404),
        ("VG_PATH_FORMAT_STANDARD", 0),
        ("VG_PATH_DATATYPE_F", 3),
        ("VG_CLOSE_PATH", 0),
        ("VG_MOVE_TO", 2),
        ("VG_LINE_TO", 4),
        ("VG_CUBIC_TO", 12),
        ("VG_LCWARC_TO", 24),
        ("VG_MOVE_TO_REL", 3),
        ("VG_LCWARC_TO_REL", 25),
        ("VG_PATH_NUM_COORDS", 0x1605),
        ("VG_NON_ZERO", 0x1901),
        ("VG_PAINT_COLOR_RAMP_PREMULTIPLIED", 0x1A07),
        ("VG_PAINT_TYPE_PATTERN", 0x1B03),
        ("VG_TILE_REFLECT", 0x1D03),
        ("VG_sRGBA_8888", 1),
        ("VG_A_4", 14),
        ("VG_sARGB_8888", 0x41),
        ("VG_sBGR_565", 0x83),
        ("VG_lABGR_8888_PRE", 0xC9),
        ("VG_IMAGE_HEIGHT", 0x1E02),
        ("VG_DRAW_IMAGE_STENCIL", 0x1F02),
        ("VG_BLEND_ADDITIVE", 0x2009),
        ("VG_FONT_NUM_GLYPHS", 0x2F00),
        ("VG_PATH_DATATYPE_QUERY", 0x2101),
        ("VG_HARDWARE_UNACCELERATED", 0x2201),
        ("VG_EXTENSIONS", 0x2303),
        ("VG_TRUE", 1),
        ("VG_MAX_ENUM", 0x7FFF_FFFF),
        ("VGU_BAD_WARP_ERROR", 0xF004),
        ("VGU_ARC_PIE", 0xF102),
    ] {
        assert_eq!(value(name), (v, false), "{name}");
    }
    for (name, v) in [
        ("VG_STROKE_PATH", 1 << 0),
        ("VG_FILL_PATH", 1 << 1),
        ("VG_PATH_CAPABILITY_APPEND_FROM", 1 << 0),
        ("VG_PATH_CAPABILITY_PATH_TRANSFORMED_BOUNDS", 1 << 11),
        ("VG_PATH_CAPABILITY_ALL", (1 << 12) - 1),
        ("VG_IMAGE_QUALITY_BETTER", 1 << 2),
        ("VG_RED", 1 << 3),
        ("VG_ALPHA", 1 << 0),
    ] {
        assert_eq!(value(name), (v, true), "{name}");
    }
}
