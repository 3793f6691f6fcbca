//! Browser entry point: hydrates the islands of the pages that the server rendered.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    // A panic in a release build (panic = "abort") otherwise shows only as `unreachable`: the
    // hook puts its message and place in the console, for the partner's engineers and for us.
    console_error_panic_hook::set_once();
    app::hydrate_islands();
}
