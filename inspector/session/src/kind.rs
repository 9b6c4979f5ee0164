//! What names a chunk: its [`ChunkKind`] (a fourcc) and the largest length a reader accepts.
//! A leaf that both the chunk encoding and the errors use.

use std::fmt;

/// Largest `stored_len` or `raw_len` a reader accepts (256 MiB). Real chunks are far smaller
/// (one frame each); the cap keeps damaged or random bytes from asking for huge allocations.
pub const MAX_CHUNK_LEN: u32 = 256 << 20;

/// The kind of a chunk: a fourcc read as a little-endian u32.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKind(pub u32);

impl ChunkKind {
    /// [`Record::Info`].
    pub const INFO: ChunkKind = ChunkKind::from_fourcc(*b"INFO");
    /// [`Record::Functions`].
    pub const FUNCTIONS: ChunkKind = ChunkKind::from_fourcc(*b"FUNC");
    /// [`Record::Context`].
    pub const CONTEXT: ChunkKind = ChunkKind::from_fourcc(*b"CTX\0");
    /// [`Record::Modules`].
    pub const MODULES: ChunkKind = ChunkKind::from_fourcc(*b"MODS");
    /// [`Record::Frame`] as version 1 wrote it: postcard. Still read, no longer written.
    pub const FRAME: ChunkKind = ChunkKind::from_fourcc(*b"FRAM");
    /// [`Record::Frame`] in columns ([`crate::columns`]), since format version 2.
    pub const FRAME_COLUMNS: ChunkKind = ChunkKind::from_fourcc(*b"FRMC");
    /// [`Record::Pipelined`].
    pub const PIPELINED: ChunkKind = ChunkKind::from_fourcc(*b"PIPE");
    /// [`Record::End`].
    pub const END: ChunkKind = ChunkKind::from_fourcc(*b"END\0");
    /// [`Record::Attach`].
    pub const ATTACH: ChunkKind = ChunkKind::from_fourcc(*b"ATCH");
    /// [`Record::State`].
    pub const STATE: ChunkKind = ChunkKind::from_fourcc(*b"STAT");
    /// [`Record::Heat`].
    pub const HEAT: ChunkKind = ChunkKind::from_fourcc(*b"HEAT");
    /// [`Record::HeatMissing`].
    pub const HEAT_MISSING: ChunkKind = ChunkKind::from_fourcc(*b"HMIS");
    /// [`Record::Geometry`] as versions 1 and 2 wrote it: postcard. Still read, no longer
    /// written.
    pub const GEOMETRY: ChunkKind = ChunkKind::from_fourcc(*b"GEOM");
    /// [`Record::Geometry`] as each draw's distinct positions with indices, in byte planes
    /// ([`crate::planes`]), since format version 3.
    pub const GEOMETRY_PLANES: ChunkKind = ChunkKind::from_fourcc(*b"GEOP");
    /// [`Record::Hooks`].
    pub const HOOKS: ChunkKind = ChunkKind::from_fourcc(*b"HOOK");
    /// [`Record::Program`].
    pub const PROGRAM: ChunkKind = ChunkKind::from_fourcc(*b"PROG");
    /// [`Record::TargetHeat`].
    pub const TARGET_HEAT: ChunkKind = ChunkKind::from_fourcc(*b"HTGT");
    /// [`Record::Flow`].
    pub const FLOW: ChunkKind = ChunkKind::from_fourcc(*b"FLOW");
    /// [`Record::VgCall`].
    pub const VG_CALL: ChunkKind = ChunkKind::from_fourcc(*b"VGCL");
    /// [`Record::VgPath`].
    pub const VG_PATH: ChunkKind = ChunkKind::from_fourcc(*b"VGPT");
    /// [`Record::Uploads`].
    pub const UPLOADS: ChunkKind = ChunkKind::from_fourcc(*b"UPLD");
    /// [`Record::WarmUp`].
    pub const WARM_UP: ChunkKind = ChunkKind::from_fourcc(*b"WARM");
    /// [`Record::AgentFrame`].
    pub const AGENT_FRAME: ChunkKind = ChunkKind::from_fourcc(*b"AGNT");
    /// [`Record::Trigger`].
    pub const TRIGGER: ChunkKind = ChunkKind::from_fourcc(*b"TRIG");
    /// [`Record::Watch`].
    pub const WATCH: ChunkKind = ChunkKind::from_fourcc(*b"WTCH");
    /// [`Record::VkRenderPass`].
    pub const VK_RENDER_PASS: ChunkKind = ChunkKind::from_fourcc(*b"VKRP");
    /// [`Record::VkFrame`].
    pub const VK_FRAME: ChunkKind = ChunkKind::from_fourcc(*b"VKFR");
    /// [`Record::LateSamples`].
    pub const LATE_SAMPLES: ChunkKind = ChunkKind::from_fourcc(*b"LATE");

    /// Every kind this build decodes.
    pub const KNOWN: [ChunkKind; 28] = [
        ChunkKind::INFO,
        ChunkKind::FUNCTIONS,
        ChunkKind::CONTEXT,
        ChunkKind::MODULES,
        ChunkKind::FRAME,
        ChunkKind::FRAME_COLUMNS,
        ChunkKind::PIPELINED,
        ChunkKind::END,
        ChunkKind::ATTACH,
        ChunkKind::STATE,
        ChunkKind::HEAT,
        ChunkKind::HEAT_MISSING,
        ChunkKind::GEOMETRY,
        ChunkKind::GEOMETRY_PLANES,
        ChunkKind::HOOKS,
        ChunkKind::PROGRAM,
        ChunkKind::TARGET_HEAT,
        ChunkKind::FLOW,
        ChunkKind::VG_CALL,
        ChunkKind::VG_PATH,
        ChunkKind::UPLOADS,
        ChunkKind::WARM_UP,
        ChunkKind::AGENT_FRAME,
        ChunkKind::TRIGGER,
        ChunkKind::WATCH,
        ChunkKind::VK_RENDER_PASS,
        ChunkKind::VK_FRAME,
        ChunkKind::LATE_SAMPLES,
    ];

    /// The kinds that carry per-call or per-pixel data (frames, pipelined times, heat maps,
    /// geometry, flow): most of a session's bytes, and most of the time spent decoding it.
    pub const BULK: [ChunkKind; 8] = [
        ChunkKind::FRAME,
        ChunkKind::FRAME_COLUMNS,
        ChunkKind::PIPELINED,
        ChunkKind::HEAT,
        ChunkKind::GEOMETRY,
        ChunkKind::GEOMETRY_PLANES,
        ChunkKind::TARGET_HEAT,
        ChunkKind::FLOW,
    ];

    /// The kind with these four bytes as it appears in the file.
    pub const fn from_fourcc(fourcc: [u8; 4]) -> Self {
        ChunkKind(u32::from_le_bytes(fourcc))
    }

    /// The four bytes as they appear in the file.
    pub const fn fourcc(self) -> [u8; 4] {
        self.0.to_le_bytes()
    }

    /// Whether this build decodes chunks of this kind (others are skipped).
    pub fn is_known(self) -> bool {
        ChunkKind::KNOWN.contains(&self)
    }

    /// Whether chunks of this kind hold a [`Record::Frame`], in either encoding.
    pub fn is_frame(self) -> bool {
        self == ChunkKind::FRAME || self == ChunkKind::FRAME_COLUMNS
    }
}

impl fmt::Display for ChunkKind {
    /// `FRAM`, `CTX`, or `0x12345678` when the bytes are not a readable fourcc, so that a
    /// damaged header never prints control characters to a terminal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bytes = self.fourcc();
        let text_len = bytes.iter().position(|&b| b == 0).unwrap_or(4);
        let readable = text_len > 0
            && bytes[..text_len].iter().all(|b| b.is_ascii_graphic())
            && bytes[text_len..].iter().all(|&b| b == 0);
        if readable {
            let text = std::str::from_utf8(&bytes[..text_len]).expect("ASCII");
            f.write_str(text)
        } else {
            write!(f, "{:#010x}", self.0)
        }
    }
}

impl fmt::Debug for ChunkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkKind({self})")
    }
}
