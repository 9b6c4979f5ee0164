//! Gives the cdylib the soname of a system OpenVG library, so that programs linked with
//! `-lOpenVG` against it record `libOpenVG.so.1` (the name they would load from a vendor's
//! package) and `dlopen("libOpenVG.so.1")` finds it through `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libOpenVG.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
