//! Browser entry point: hydrates the islands of the pages that the server rendered.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    // Development builds explain panics in the console; release builds stay small.
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
    app::hydrate_islands();
}
