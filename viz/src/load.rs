//! Reading and analysing a session on a background thread, so the window opens at once and
//! keeps painting while a large session loads.

use crate::error::VizError;
use crate::metric::Metric;
use gpuheat_analysis::checklist::{self, Finding};
use gpuheat_analysis::measure::flow::Labels;
use gpuheat_analysis::open::Damage;
use gpuheat_analysis::{Analysis, DrawCost, RankedBy};
use gpuheat_session::Session;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::sync::Arc;
use std::time::Instant;

/// One frame of a loaded session and where its parts are.
#[derive(Debug)]
pub struct FrameEntry {
    pub index: u64,
    /// Position in [`Session::frames`].
    pub frame_pos: usize,
    /// Position in [`Analysis::frames`].
    pub stats_pos: usize,
    /// The frame's work calls in call order, as positions in [`Analysis::draws`].
    pub draws: Vec<usize>,
    /// Position in [`Session::heat`].
    pub heat: Option<usize>,
    /// Why the frame has no heat map, when the capture said.
    pub heat_missing: Option<String>,
    /// Position in [`Session::geometry`].
    pub geometry: Option<usize>,
    /// Whether the frame has maps of offscreen render targets (`HTGT` records): its cost
    /// flow is then worth computing (`gpuheat_analysis::measure::flow`).
    pub targets: bool,
    /// What the frame strip shows: GPU ms (serialized, else pipelined), else wall ms.
    pub cost_ms: f64,
}

/// A session with its analysis and findings, indexed for the viewer.
pub struct Loaded {
    pub path: PathBuf,
    pub session: Session,
    pub analysis: Analysis,
    pub findings: Vec<Finding>,
    /// In time order (by frame number).
    pub frames: Vec<FrameEntry>,
    by_index: HashMap<u64, usize>,
    /// Counter name → unit, from the contexts' catalogues.
    pub units: BTreeMap<String, String>,
    /// The counters measured on at least one draw: the extra columns of the draw list.
    pub counters: Vec<String>,
    /// What the frame strip's bars measure.
    pub strip_unit: &'static str,
    /// The metric draws are ranked by.
    pub ranked_by: Metric,
    /// How render targets are named (`screen`, `3`, `0xCONTEXT:3`), as `gpuheat heatmap
    /// --target` and `report` name them.
    pub labels: Labels,
    /// File size in bytes.
    pub bytes: u64,
    /// From the start of loading to the index being ready.
    pub load_ms: f64,
}

impl Loaded {
    /// Position in [`Loaded::frames`] of frame number `index`.
    pub fn frame_pos(&self, index: u64) -> Option<usize> {
        self.by_index.get(&index).copied()
    }

    pub fn frame(&self, index: u64) -> Option<&FrameEntry> {
        self.frame_pos(index).map(|p| &self.frames[p])
    }

    /// The work call `call` of frame `frame`.
    pub fn draw(&self, frame: u64, call: u32) -> Option<&DrawCost> {
        let f = self.frame(frame)?;
        let pos = f
            .draws
            .binary_search_by_key(&call, |&i| self.analysis.draws[i].call)
            .ok()?;
        Some(&self.analysis.draws[f.draws[pos]])
    }

    /// The frame to show first: a watch's first triggering frame (the reason the session
    /// exists: its findings say why it hitched; the full-mode frames after it follow), else
    /// the first with a heat map (of the screen, else of an offscreen target), else the
    /// first; warm-up frames ([`gpuheat_analysis::measure::warmup`]) only when every frame
    /// is one, since their times hold the capture's own first-time work.
    pub fn default_frame(&self) -> Option<u64> {
        if let Some(t) = self
            .session
            .triggers
            .iter()
            // Not the frames a live view asked for (number 0): the frame before them is no
            // reason to look.
            .find(|t| t.number > 0 && self.frame(t.frame).is_some())
        {
            return Some(t.frame);
        }
        let warmup = gpuheat_analysis::measure::warmup::WarmUp::of(&self.session);
        let steady: Vec<&FrameEntry> = self
            .frames
            .iter()
            .filter(|f| !warmup.contains(f.index))
            .collect();
        let pool: Vec<&FrameEntry> = if steady.is_empty() {
            self.frames.iter().collect()
        } else {
            steady
        };
        pool.iter()
            .find(|f| f.heat.is_some())
            .or_else(|| pool.iter().find(|f| f.targets))
            .or(pool.first())
            .map(|f| f.index)
    }

    /// Every metric a draw can be measured by in this session, ranking metric first.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut m = vec![
            Metric::GpuSerialized,
            Metric::GpuPipelined,
            Metric::FrameShare,
            Metric::Cpu,
        ];
        m.extend(self.counters.iter().cloned().map(Metric::Counter));
        m
    }
}

/// Where loading stands.
#[derive(Clone, Debug, PartialEq)]
pub enum Stage {
    /// Reading the file: bytes done of total.
    Reading {
        done: u64,
        total: u64,
    },
    Analysing,
    Checking,
}

const READING: u8 = 0;
const ANALYSING: u8 = 1;
const CHECKING: u8 = 2;

struct Progress {
    bytes: AtomicU64,
    total: u64,
    stage: AtomicU8,
}

/// What the viewer has of its session.
pub enum LoadState {
    Loading(Stage),
    Ready(Arc<Loaded>),
    Failed(String),
}

/// The background load of one session.
pub struct Loader {
    progress: Arc<Progress>,
    rx: Receiver<Result<Loaded, VizError>>,
    state: Option<Result<Arc<Loaded>, String>>,
}

impl Loader {
    /// Starts reading `path` on a new thread; a damaged session is refused or salvaged as
    /// `damage` says.
    pub fn start(path: PathBuf, damage: Damage) -> Loader {
        let total = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let progress = Arc::new(Progress {
            bytes: AtomicU64::new(0),
            total,
            stage: AtomicU8::new(READING),
        });
        let (tx, rx) = mpsc::channel();
        let p = progress.clone();
        let started = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("gpuheat-viz-load".into())
            .spawn(move || {
                let _ = tx.send(load(&path, damage, &p, started));
            });
        let state = spawned
            .err()
            .map(|e| Err(format!("cannot start the loading thread: {e}")));
        Loader {
            progress,
            rx,
            state,
        }
    }

    /// A loader with nothing to load (a live view before its first capture).
    pub fn idle() -> Loader {
        let (_, rx) = mpsc::channel();
        Loader {
            progress: Arc::new(Progress {
                bytes: AtomicU64::new(0),
                total: 0,
                stage: AtomicU8::new(READING),
            }),
            rx,
            state: Some(Err("nothing captured yet".into())),
        }
    }

    /// Where loading stands now; never blocks.
    pub fn poll(&mut self) -> LoadState {
        if self.state.is_none() {
            match self.rx.try_recv() {
                Ok(r) => self.state = Some(r.map(Arc::new).map_err(|e| e.to_string())),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => {
                    self.state = Some(Err("the loading thread stopped".into()))
                }
            }
        }
        match &self.state {
            Some(Ok(l)) => LoadState::Ready(l.clone()),
            Some(Err(e)) => LoadState::Failed(e.clone()),
            None => LoadState::Loading(match self.progress.stage.load(Ordering::Relaxed) {
                READING => Stage::Reading {
                    done: self.progress.bytes.load(Ordering::Relaxed),
                    total: self.progress.total,
                },
                ANALYSING => Stage::Analysing,
                _ => Stage::Checking,
            }),
        }
    }

    /// Waits for the load to finish.
    pub fn wait(&mut self) -> Result<Arc<Loaded>, String> {
        if self.state.is_none() {
            self.state = Some(match self.rx.recv() {
                Ok(r) => r.map(Arc::new).map_err(|e| e.to_string()),
                Err(_) => Err("the loading thread stopped".into()),
            });
        }
        match self.poll() {
            LoadState::Ready(l) => Ok(l),
            LoadState::Failed(e) => Err(e),
            LoadState::Loading(_) => unreachable!("state was set above"),
        }
    }
}

/// Counts the bytes read, for the progress bar.
struct Counting<'a, R> {
    inner: R,
    progress: &'a Progress,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

fn load(
    path: &Path,
    damage: Damage,
    progress: &Progress,
    started: Instant,
) -> Result<Loaded, VizError> {
    let fail = |reason: String| VizError::Session {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| fail(format!("cannot open: {e}")))?;
    let reader = Counting {
        inner: std::io::BufReader::with_capacity(1 << 20, file),
        progress,
    };
    // Read as every command reads a session: damage refused unless asked, VG draws painted.
    let session = gpuheat_analysis::open::read(reader, damage)
        .map_err(|e| fail(e.to_string()))?
        .session;
    progress.stage.store(ANALYSING, Ordering::Relaxed);
    let analysis = gpuheat_analysis::analyse(&session);
    progress.stage.store(CHECKING, Ordering::Relaxed);
    let findings = checklist::check(&session, &analysis);
    Ok(index(
        path,
        session,
        analysis,
        findings,
        progress.total,
        started,
    ))
}

fn index(
    path: &Path,
    session: Session,
    analysis: Analysis,
    findings: Vec<Finding>,
    bytes: u64,
    started: Instant,
) -> Loaded {
    let mut frames: Vec<FrameEntry> = session
        .frames
        .iter()
        .enumerate()
        .map(|(pos, f)| FrameEntry {
            index: f.index,
            frame_pos: pos,
            stats_pos: pos,
            draws: Vec::new(),
            heat: None,
            heat_missing: None,
            geometry: None,
            targets: false,
            cost_ms: 0.0,
        })
        .collect();
    frames.sort_by_key(|f| f.index);
    // A frame number written twice (it should not be) keeps its first record.
    frames.dedup_by_key(|f| f.index);
    let by_index: HashMap<u64, usize> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| (f.index, i))
        .collect();
    for (i, s) in analysis.frames.iter().enumerate() {
        if let Some(&p) = by_index.get(&s.index) {
            frames[p].stats_pos = i;
            frames[p].cost_ms = s
                .gpu_serialized_ms
                .or(s.gpu_pipelined_ms)
                .unwrap_or(s.wall_ms);
        }
    }
    let strip_unit = if analysis
        .frames
        .iter()
        .any(|s| s.gpu_serialized_ms.is_some())
    {
        "GPU ms, serialized"
    } else if analysis.frames.iter().any(|s| s.gpu_pipelined_ms.is_some()) {
        "GPU ms, pipelined"
    } else {
        "wall ms"
    };
    let mut counters = std::collections::BTreeSet::new();
    for (i, d) in analysis.draws.iter().enumerate() {
        if let Some(&p) = by_index.get(&d.frame) {
            frames[p].draws.push(i);
        }
        for name in d.counters.keys() {
            if !counters.contains(name) {
                counters.insert(name.clone());
            }
        }
    }
    for f in &mut frames {
        f.draws.sort_by_key(|&i| analysis.draws[i].call);
    }
    for (i, m) in session.heat.iter().enumerate() {
        if let Some(&p) = by_index.get(&m.frame) {
            frames[p].heat.get_or_insert(i);
        }
    }
    for m in &session.heat_missing {
        if let Some(&p) = by_index.get(&m.frame) {
            frames[p].heat_missing.get_or_insert(m.reason.clone());
        }
    }
    for t in &session.target_heat {
        if let Some(&p) = by_index.get(&t.frame) {
            frames[p].targets = true;
        }
    }
    for (i, g) in session.geometry.iter().enumerate() {
        if let Some(&p) = by_index.get(&g.frame) {
            frames[p].geometry.get_or_insert(i);
        }
    }
    let units = session
        .contexts
        .iter()
        .flat_map(|c| c.counters.iter())
        .map(|c| (c.name.clone(), c.unit.clone()))
        .collect();
    let ranked_by = match analysis.ranked_by {
        RankedBy::GpuTimeSerialized => Metric::GpuSerialized,
        RankedBy::GpuTimePipelined => Metric::GpuPipelined,
    };
    let labels = Labels::of(&session);
    Loaded {
        labels,
        path: path.to_path_buf(),
        session,
        analysis,
        findings,
        frames,
        by_index,
        units,
        counters: counters.into_iter().collect(),
        strip_unit,
        ranked_by,
        bytes,
        load_ms: started.elapsed().as_secs_f64() * 1e3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_testkit::SessionBuilder;

    fn loaded(s: Session) -> Loaded {
        let analysis = gpuheat_analysis::analyse(&s);
        index(
            Path::new("test.gpuheat"),
            s,
            analysis,
            Vec::new(),
            0,
            Instant::now(),
        )
    }

    /// Frames 1 to `n`, each one painted draw.
    fn painted(n: u64) -> SessionBuilder {
        (0..n).fold(SessionBuilder::new().frame_index(1), |b, _| {
            b.frame(|f| {
                let c = f.draw(1_000_000);
                f.heat_map(8, 8).cover(c, [0, 0, 4, 4]);
            })
        })
    }

    #[test]
    fn the_viewer_opens_on_a_frame_that_is_no_warm_up_frame() {
        // An attach by an agent from before the warm-up: its first frame held the set-up.
        assert_eq!(
            loaded(painted(3).attached(None).build()).default_frame(),
            Some(2)
        );
        let marked = painted(3)
            .attached(Some(1))
            .warmup(1, "measured context 0x1")
            .warmup(2, "made the heat painter of context 0x1")
            .build();
        assert_eq!(loaded(marked).default_frame(), Some(3));
        // A warmed-up capture's first frame is as good as any.
        assert_eq!(
            loaded(painted(3).attached(Some(1)).build()).default_frame(),
            Some(1)
        );
        // Only warm-up frames: the first with a map all the same.
        assert_eq!(
            loaded(painted(1).attached(None).build()).default_frame(),
            Some(1)
        );
    }

    #[test]
    fn a_watch_opens_on_its_first_triggering_frame_that_was_kept() {
        let mut s = painted(4).build();
        let hit = |frame| gpuheat_session::TriggerHit {
            number: 1,
            frame,
            rule: "frame-ms>20".into(),
            value_ns: 30_000_000,
            kept_first: 1,
            kept_last: frame,
            full_first: frame + 1,
            full_frames: 1,
        };
        s.triggers = vec![hit(9), hit(3)];
        assert_eq!(loaded(s).default_frame(), Some(3));
    }
}
