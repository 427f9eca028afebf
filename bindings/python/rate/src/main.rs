//! The Rust side of `bindings/python/bench.py`: writes the benchmark inputs (the
//! generators of `benches/throughput.rs`) and measures the library's rates on them,
//! so the Python package is compared with Rust on the very same bytes.
//!
//! - `idiolect-rate gen DIR SIZE`: writes one input per dialect (`DIALECT.txt`).
//! - `idiolect-rate whole DIALECT FILE`: MB/s of the typed library parse and of the
//!   session path writing compact JSON (what `idiolect.parse` runs), one line of JSON.
//! - `idiolect-rate many DIALECT RECORDS THREADS`: MB/s of parsing every record of a
//!   JSON Lines file of strings on a rayon pool, with the typed library parse and
//!   with the session path writing compact JSON, one line of JSON.
//!
//! `idiolect-rate-mimalloc` is the same program with mimalloc as the global
//! allocator, as the Python package's native module has it: the library's rates
//! under the allocator the package runs with.

#[path = "rate.rs"]
mod rate;

fn main() {
    rate::main()
}
