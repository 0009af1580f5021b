//! Tauri's build step: embeds `tauri.conf.json`, the capabilities and icons
//! (on Windows also the executable's icon, `icons/icon.ico`, made from
//! `icons/icon.png`).
fn main() {
    let windows = tauri_build::WindowsAttributes::new().window_icon_path("../icons/icon.ico");
    let attributes = tauri_build::Attributes::new().windows_attributes(windows);
    if let Err(e) = tauri_build::try_build(attributes) {
        eprintln!("tauri-build: {e:#}");
        std::process::exit(1);
    }
}
