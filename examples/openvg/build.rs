//! Gives the cdylib the soname of a system OpenVG library, so that programs linked with
//! `-lOpenVG` against it record `libOpenVG.so.1` (the name they would load from a vendor's
//! package), and places `libOpenVG.so.1 → libOpenVG.so` symlinks where cargo puts the
//! library (`target/<profile>/` and `target/<profile>/deps/`), so that such programs run
//! with `LD_LIBRARY_PATH` set to either directory. The links dangle until the library is
//! built, which follows this script.

use std::path::Path;

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libOpenVG.so.1");
    println!("cargo:rerun-if-changed=build.rs");
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    // OUT_DIR is target/<profile>/build/<package>-<hash>/out.
    let Some(profile) = Path::new(&out).ancestors().nth(3) else {
        return;
    };
    for dir in [profile.to_path_buf(), profile.join("deps")] {
        let link = dir.join("libOpenVG.so.1");
        if std::fs::symlink_metadata(&link).is_err() {
            // A failure only costs programs the soname link; the library still builds.
            let _ = std::os::unix::fs::symlink("libOpenVG.so", &link);
        }
    }
    // This package's example programs link the cdylib (`-lOpenVG`) from deps/.
    println!(
        "cargo:rustc-link-search=native={}",
        profile.join("deps").display()
    );
}
