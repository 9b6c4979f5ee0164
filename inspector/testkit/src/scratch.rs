//! Scratch directories for tests (the `testing` feature): one definition for every crate's
//! tests, so none of them leaves folders behind in the temporary directory.

use std::path::{Path, PathBuf};

/// A scratch directory for one test, removed with everything in it when dropped, so also
/// when the test fails (panics unwind through it).
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty `TMPDIR/PREFIX-PID-TEST` (what an earlier run of the same pid left
    /// there is removed first).
    pub fn new(prefix: &str, test: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("{prefix}-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d)
            .unwrap_or_else(|e| panic!("creating scratch directory {}: {e}", d.display()));
        Scratch(d)
    }

    /// Gives up the removal on drop and returns the path, for a directory that something
    /// else (an exit handler) removes.
    pub fn keep(self) -> PathBuf {
        let path = self.0.clone();
        std::mem::forget(self);
        path
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::Scratch;

    #[test]
    fn removed_on_drop_with_its_contents_and_kept_when_asked() {
        let s = Scratch::new("gpuheat-session-scratch", "drop");
        let path = s.to_path_buf();
        std::fs::write(s.join("f"), b"x").unwrap();
        drop(s);
        assert!(!path.exists());

        let kept = Scratch::new("gpuheat-session-scratch", "keep").keep();
        assert!(kept.is_dir());
        std::fs::remove_dir_all(&kept).unwrap();
    }
}
