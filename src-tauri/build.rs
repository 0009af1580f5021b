//! Tauri's build step: embeds `tauri.conf.json`, the capabilities and icons.
fn main() {
    tauri_build::build();
}
