fn main() {
    napi_build::setup();
    // The profile goes into the binary as a marker string, so a publish guard can refuse a
    // debug build by reading the file instead of guessing from its size.
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=CG_BUILD_PROFILE={profile}");
    println!("cargo:rerun-if-changed=build.rs");
}
