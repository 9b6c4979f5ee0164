//! The live view's data (`gpuheat view --live PID`): the records a watch streams (every frame
//! in timeline mode, a ring of 0 frames), a sliding window of the last frames for the frame-time
//! chart and the per-draw table, and the frames captured in full mode on request, written to
//! a session file the usual tabs then load. The same records as a capture's: one contract.

use gpuheat_analysis::checklist;
use gpuheat_analysis::measure::aggregate::aggregate;
use gpuheat_session::control::{Command, Timing};
use gpuheat_session::{CaptureMode, Frame, PipelinedBatch, Record, Session, SessionWriter};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What connects the viewer to a watched program: the records it streams and a way to send
/// commands (`false` when the agent is gone).
pub struct LiveLink {
    /// Decoded records, in the order the agent sent them.
    pub records: Receiver<Record>,
    /// Sends a command line to the agent.
    pub send: Box<dyn Fn(&Command) -> bool + Send>,
    /// Where captures and Save write the session.
    pub save_to: PathBuf,
    /// The program, as the toolbar names it.
    pub title: String,
}

/// Frames the table's window holds (timeline frames of the program's own pace).
pub const WINDOW: usize = 300;
/// Frames the chart shows.
pub const CHART: usize = 600;
/// How often the table is recomputed.
const TABLE_EVERY: Duration = Duration::from_millis(500);
/// Most records taken in per UI frame: a burst of them never stalls the UI.
const PER_POLL: usize = 20_000;

/// One frame on the chart.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub index: u64,
    /// Swap to swap.
    pub wall_ms: f64,
    /// Σ of its calls' durations.
    pub gl_ms: f64,
    /// Σ of its work calls' pipelined GPU times, once they landed.
    pub gpu_ms: Option<f64>,
}

/// A row of the per-draw table: one draw identity over the window.
#[derive(Debug, Clone)]
pub struct Row {
    pub text: String,
    pub source: Option<String>,
    /// Median and spread (1.4826·MAD) of its pipelined GPU time, µs.
    pub median_us: f64,
    pub spread_us: f64,
    /// Frames of the window it occurs in.
    pub frames: usize,
}

/// The table over the window, and the findings the window raises.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub rows: Vec<Row>,
    pub findings: Vec<String>,
    /// Frames it was computed over.
    pub frames: usize,
}

/// A held frame and the records that came for it later.
struct Held {
    frame: Frame,
    pipelined: Vec<PipelinedBatch>,
}

/// The live view's state.
pub struct Live {
    link: LiveLink,
    /// Records not about a frame (INFO, FUNC, CTX, MODS, PROG, HOOK …), kept for the sessions
    /// written.
    skeleton: Vec<Record>,
    window: VecDeque<Held>,
    pub chart: VecDeque<Point>,
    /// What the captures took: their TRIG records and every record of their frames.
    captures: Vec<Record>,
    /// The frames being captured now (first, last).
    capturing: Option<(u64, u64)>,
    /// Captures finished since the session file was last written for the viewer.
    finished: usize,
    /// Frames received, and the last frame's end (for wall times).
    pub received: u64,
    /// Frames the stream skipped (numbers between two received frames that never came: the
    /// agent's writer dropped them, or the program's frames ran ahead of the socket).
    pub missing: u64,
    last_end: Option<(u64, u64)>,
    table: Option<Arc<Table>>,
    table_rx: Option<Receiver<Table>>,
    table_at: Instant,
    /// The stream ended (the program exited, or the agent went away).
    pub ended: bool,
    /// What the panel says last happened (saved, capture asked…).
    pub status: String,
    /// The frame the chart's cursor is on.
    pub cursor: Option<u64>,
}

impl Live {
    pub fn new(link: LiveLink) -> Live {
        Live {
            link,
            skeleton: Vec::new(),
            window: VecDeque::new(),
            chart: VecDeque::new(),
            captures: Vec::new(),
            capturing: None,
            finished: 0,
            received: 0,
            missing: 0,
            last_end: None,
            table: None,
            table_rx: None,
            table_at: Instant::now(),
            ended: false,
            status: String::new(),
            cursor: None,
        }
    }

    /// The program, as the toolbar names it.
    pub fn title(&self) -> &str {
        &self.link.title
    }

    /// Where captures and Save go.
    pub fn save_to(&self) -> &Path {
        &self.link.save_to
    }

    /// Takes in what arrived; returns `true` when a capture finished and the session file
    /// was written for the viewer to load.
    pub fn poll(&mut self) -> bool {
        for _ in 0..PER_POLL {
            match self.link.records.try_recv() {
                Ok(r) => self.take(r),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.ended = true;
                    break;
                }
            }
        }
        self.refresh_table();
        if self.finished > 0 {
            self.finished = 0;
            return match self.write(false) {
                Ok(()) => true,
                Err(e) => {
                    self.status = e;
                    false
                }
            };
        }
        false
    }

    fn in_capture(&self, frame: u64) -> bool {
        self.capturing
            .is_some_and(|(a, b)| (a..=b).contains(&frame))
    }

    fn take(&mut self, r: Record) {
        match r {
            Record::Frame(f) => {
                self.received += 1;
                if let Some((last, _)) = self.last_end {
                    self.missing += f.index.saturating_sub(last + 1);
                }
                let wall = match self.last_end {
                    Some((i, end)) if i + 1 == f.index => f.end_ns.saturating_sub(end),
                    _ => f.end_ns.saturating_sub(f.begin_ns),
                };
                self.last_end = Some((f.index, f.end_ns));
                self.chart.push_back(Point {
                    index: f.index,
                    wall_ms: wall as f64 / 1e6,
                    gl_ms: f.calls.iter().map(|c| c.duration_ns as f64).sum::<f64>() / 1e6,
                    gpu_ms: None,
                });
                while self.chart.len() > CHART {
                    self.chart.pop_front();
                }
                if let Some((_, last)) = self.capturing.filter(|(_, last)| f.index > *last) {
                    // A frame after the capture: all of the capture's frames have ended.
                    let _ = last;
                    self.capturing = None;
                    self.finished += 1;
                }
                if self.in_capture(f.index) {
                    self.captures.push(Record::Frame(f));
                } else {
                    self.window.push_back(Held {
                        frame: f,
                        pipelined: Vec::new(),
                    });
                    while self.window.len() > WINDOW {
                        self.window.pop_front();
                    }
                }
            }
            Record::Pipelined(b) => {
                if let Some(p) = self.chart.iter_mut().find(|p| p.index == b.frame) {
                    if !b.disjoint {
                        let ms = b.times.iter().map(|t| t.gpu_ns as f64).sum::<f64>() / 1e6;
                        *p.gpu_ms.get_or_insert(0.0) += ms;
                    }
                }
                if self.in_capture(b.frame) || self.captured(b.frame) {
                    self.captures.push(Record::Pipelined(b));
                } else if let Some(h) = self.window.iter_mut().find(|h| h.frame.index == b.frame) {
                    h.pipelined.push(b);
                }
            }
            Record::Trigger(t) => {
                let last = t.full_first + u64::from(t.full_frames.max(1)) - 1;
                self.capturing = Some((t.full_first, last));
                self.captures.push(Record::Trigger(t));
            }
            Record::End(_) => self.ended = true,
            r => match r.frame() {
                Some(f) if self.in_capture(f) || self.captured(f) => self.captures.push(r),
                // A watched frame's other records (its agent waits) are not kept.
                Some(_) => {}
                None => {
                    // The last status has the totals.
                    if let Record::Watch(_) = r {
                        self.skeleton.retain(|x| !matches!(x, Record::Watch(_)));
                    }
                    self.skeleton.push(r)
                }
            },
        }
    }

    /// Whether `frame` was captured in full mode by an earlier capture.
    fn captured(&self, frame: u64) -> bool {
        self.captures.iter().any(|r| match r {
            Record::Trigger(t) => {
                frame >= t.full_first && frame - t.full_first < u64::from(t.full_frames)
            }
            _ => false,
        })
    }

    /// Asks the agent for the next `frames` frames in full mode (`heat`: painted).
    pub fn capture(&mut self, frames: u32, heat: bool) {
        let sent = (self.link.send)(&Command::Capture {
            frames,
            mode: CaptureMode::Full,
            heat,
            timing: Timing::Auto,
        });
        self.status = if sent {
            format!(
                "capturing the next {frames} frames in full mode{}",
                if heat { " with heat" } else { "" }
            )
        } else {
            "the agent is gone: nothing more can be captured".into()
        };
    }

    /// Whether a capture was asked for and has not finished.
    pub fn capturing(&self) -> bool {
        self.capturing.is_some()
    }

    /// Writes the session: the captures, and with `window` the window's frames too (Save).
    pub fn write(&mut self, window: bool) -> Result<(), String> {
        let path = self.link.save_to.clone();
        let records = self.records(window);
        let mut w = SessionWriter::create(&path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        for r in &records {
            w.append(r)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        w.finish()
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let frames = records
            .iter()
            .filter(|r| matches!(r, Record::Frame(_)))
            .count();
        self.status = format!("wrote {frames} frames to {}", path.display());
        Ok(())
    }

    /// The session's records: the skeleton (INFO and FUNC first, as a reader wants them),
    /// then the window's frames (with `window`), then the captures (with `captures`).
    fn records_of(&self, window: bool, captures: bool) -> Vec<Record> {
        let mut out: Vec<Record> = Vec::new();
        let first = |r: &Record| match r {
            Record::Info(_) => 0,
            Record::Functions(_) => 1,
            _ => 2,
        };
        let mut skeleton: Vec<&Record> = self
            .skeleton
            .iter()
            .filter(|r| !matches!(r, Record::Watch(_) | Record::End(_)))
            .collect();
        skeleton.sort_by_key(|r| first(r));
        out.extend(skeleton.into_iter().cloned());
        // What the stream was: every frame sent, none held.
        out.push(Record::Watch(gpuheat_session::WatchStatus {
            frames_watched: self.received,
            ring_frames: 0,
            ring_capacity: 0,
            ring_bytes: 0,
            ring_limit_bytes: 0,
            triggers: 0,
        }));
        if window {
            for h in &self.window {
                out.push(Record::Frame(h.frame.clone()));
                out.extend(h.pipelined.iter().cloned().map(Record::Pipelined));
            }
        }
        if captures {
            out.extend(self.captures.iter().cloned());
        }
        let frames = out.iter().filter(|r| matches!(r, Record::Frame(_))).count() as u64;
        out.push(Record::End(gpuheat_session::EndInfo {
            reason: gpuheat_session::EndReason::Stopped,
            frames_captured: frames,
            dropped_calls: 0,
            detail: Some(format!(
                "live view: {} frames streamed ({} missing); this session holds its captures{}",
                self.received,
                self.missing,
                if window { " and its last frames" } else { "" }
            )),
            renderer_query: None,
        }));
        out
    }

    /// The session's records with the captures, and the window's frames with `window`.
    fn records(&self, window: bool) -> Vec<Record> {
        self.records_of(window, true)
    }

    /// The table over the window, recomputed on a thread of its own every [`TABLE_EVERY`].
    pub fn table(&self) -> Option<&Table> {
        self.table.as_deref()
    }

    fn refresh_table(&mut self) {
        if let Some(rx) = &self.table_rx {
            match rx.try_recv() {
                Ok(t) => {
                    self.table = Some(Arc::new(t));
                    self.table_rx = None;
                }
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => self.table_rx = None,
            }
        }
        if self.table_at.elapsed() < TABLE_EVERY || self.window.is_empty() {
            return;
        }
        self.table_at = Instant::now();
        let records = self.records_of(true, false);
        let frames = self.window.len();
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("gpuheat-viz-live".into())
            .spawn(move || {
                if let Some(t) = table_of(&records, frames) {
                    let _ = tx.send(t);
                }
            });
        if spawned.is_ok() {
            self.table_rx = Some(rx);
        }
    }

    /// The calls of frame `index`, if the window holds it: (name and arguments, duration ms).
    pub fn calls_of(&self, index: u64) -> Option<Vec<(String, f64)>> {
        let h = self.window.iter().find(|h| h.frame.index == index)?;
        let names = self.skeleton.iter().find_map(|r| match r {
            Record::Functions(f) => Some(f),
            _ => None,
        })?;
        Some(
            h.frame
                .calls
                .iter()
                .map(|c| {
                    let text = names.functions.get(usize::from(c.func)).map_or_else(
                        || format!("#{}", c.func),
                        |info| gpuheat_analysis::call_text(info, &c.args),
                    );
                    (text, c.duration_ns as f64 / 1e6)
                })
                .collect(),
        )
    }
}

/// The window's draws by identity, costliest median first, and the findings it raises.
fn table_of(records: &[Record], frames: usize) -> Option<Table> {
    let mut bytes = gpuheat_session::FileHeader::current().to_bytes().to_vec();
    for r in records {
        bytes.extend_from_slice(&gpuheat_session::try_encode(r).ok()?);
    }
    let s = Session::from_reader(&bytes[..]).ok()?;
    let stats = aggregate(&s, false);
    let m = stats.rank_metric();
    let rows = stats
        .draws
        .iter()
        .filter_map(|d| {
            let x = d.metric(m)?;
            Some(Row {
                text: d.text.clone(),
                source: d.source.clone(),
                median_us: x.median / 1e3,
                spread_us: 1.4826 * x.mad / 1e3,
                frames: d.occurrences.len(),
            })
        })
        .take(50)
        .collect();
    let analysis = gpuheat_analysis::measure::cost::analyse_with(&s, false);
    let mut findings: Vec<String> = Vec::new();
    for f in checklist::check(&s, &analysis) {
        let line = format!("{}: {}", f.rule, f.title);
        if !findings.iter().any(|x| x.starts_with(f.rule)) {
            findings.push(line);
        }
    }
    Some(Table {
        rows,
        findings,
        frames,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuheat_session::TriggerHit;
    use gpuheat_testkit::SessionBuilder;
    use std::sync::mpsc::sync_channel;
    use std::sync::Mutex;

    /// A live view fed by hand: its link records the commands sent.
    fn live(
        dir: &Path,
    ) -> (
        Live,
        std::sync::mpsc::SyncSender<Record>,
        Arc<Mutex<Vec<String>>>,
    ) {
        let (tx, rx) = sync_channel(1 << 16);
        let sent = Arc::new(Mutex::new(Vec::new()));
        let log = sent.clone();
        let link = LiveLink {
            records: rx,
            send: Box::new(move |c| {
                log.lock().unwrap().push(c.to_string());
                true
            }),
            save_to: dir.join("live.gpuheat"),
            title: "testing".into(),
        };
        (Live::new(link), tx, sent)
    }

    /// Frames 1..=n of one draw of 1 ms each (pipelined), as a stream sends them.
    fn stream(n: u64) -> Vec<Record> {
        let mut b = SessionBuilder::new().frame_index(1);
        for _ in 0..n {
            b = b.frame(|f| {
                let d = f.draw_untimed();
                f.pipelined(d, 1_000_000);
            });
        }
        gpuheat_testkit::records(&b.build())
    }

    #[test]
    fn the_window_slides_a_capture_is_written_and_save_keeps_both() {
        let dir = gpuheat_testkit::Scratch::new("gpuheat-viz", "live");
        let (mut l, tx, sent) = live(&dir);
        let records = stream(WINDOW as u64 + 20);
        // The capture: frames 305-306 in full mode, asked at frame 304.
        let mut fed = 0;
        for r in records {
            if let Record::Frame(f) = &r {
                if f.index == 305 {
                    tx.send(Record::Trigger(TriggerHit {
                        number: 0,
                        frame: 304,
                        rule: "capture".into(),
                        value_ns: 1,
                        kept_first: 304,
                        kept_last: 304,
                        full_first: 305,
                        full_frames: 2,
                    }))
                    .unwrap();
                }
            }
            tx.send(r).unwrap();
            fed += 1;
        }
        assert!(fed > 0);
        // Frame 307 came after the capture: it is complete, and written for the viewer.
        assert!(l.poll());
        assert_eq!(l.received, WINDOW as u64 + 20);
        assert_eq!(l.missing, 0);
        assert_eq!(l.chart.len(), WINDOW + 20);
        assert!(
            l.chart.iter().all(|p| p.gpu_ms == Some(1.0)),
            "pipelined joined"
        );
        let captured = Session::open(dir.join("live.gpuheat")).unwrap();
        let frames: Vec<u64> = captured.frames.iter().map(|f| f.index).collect();
        assert_eq!(frames, [305, 306]);
        assert_eq!(captured.triggers.len(), 1);
        assert_eq!(captured.pipelined.len(), 2);
        // The window holds the last WINDOW watched frames, the captured ones apart.
        assert_eq!(l.window.len(), WINDOW);
        assert!(l
            .window
            .iter()
            .all(|h| !(305..=306).contains(&h.frame.index)));
        assert_eq!(l.calls_of(320).unwrap().len(), 2, "a draw and the swap");
        assert!(l.calls_of(1).is_none(), "slid out of the window");
        // Save: the window and the captures.
        l.write(true).unwrap();
        let saved = Session::open(dir.join("live.gpuheat")).unwrap();
        assert_eq!(saved.frames.len(), WINDOW + 2);
        // It says what the stream was: every frame sent, how many, and how it ended.
        let w = saved.watch.unwrap();
        assert_eq!((w.frames_watched, w.ring_capacity), (l.received, 0));
        let end = saved.end.unwrap();
        assert_eq!(end.frames_captured, WINDOW as u64 + 2);
        assert!(end
            .detail
            .unwrap()
            .contains("320 frames streamed (0 missing)"));
        // Capture buttons send the control line.
        l.capture(3, true);
        assert_eq!(*sent.lock().unwrap(), ["capture 3 full heat"]);
        // The stream ends with its sender.
        drop(tx);
        l.poll();
        assert!(l.ended);
    }

    #[test]
    fn the_table_ranks_the_windows_draws_by_their_median() {
        let dir = gpuheat_testkit::Scratch::new("gpuheat-viz", "live-table");
        let (mut l, tx, _) = live(&dir);
        for r in stream(10) {
            tx.send(r).unwrap();
        }
        l.poll();
        l.table_at = Instant::now() - TABLE_EVERY;
        l.refresh_table();
        let deadline = Instant::now() + Duration::from_secs(20);
        while l.table().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
            l.refresh_table();
        }
        let t = l.table().expect("the table");
        assert_eq!(t.frames, 10);
        assert_eq!(t.rows.len(), 1);
        assert!((t.rows[0].median_us - 1000.0).abs() < 1e-6);
        assert_eq!(t.rows[0].frames, 10);
    }
}
