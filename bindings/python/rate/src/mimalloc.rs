//! `idiolect-rate` with mimalloc as the global allocator, as the Python package's
//! native module has it (see `main.rs` for the commands).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "rate.rs"]
mod rate;

fn main() {
    rate::main()
}
