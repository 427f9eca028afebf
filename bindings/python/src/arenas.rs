//! Emptied arenas of CPython's small-object allocator kept for reuse.
//!
//! CPython's small-object allocator (pymalloc) takes memory for Python objects
//! in arenas of 1 MiB, mapped from the system, and unmaps an arena as soon as
//! its last object is freed (keeping at most one empty arena). A large document
//! is hundreds of thousands of objects (a 4 MB kindaxml answer: about 190,000,
//! 23 arenas), so each parse of one mapped its objects' memory afresh and the
//! kernel zeroed every page on its first write; dropping the result unmapped it
//! again. Sampled with `perf`, that was 39% of the calling thread's time in
//! `parse` (page faults while converting, unmapping while freeing), and the
//! calling thread is the serial part of `parse` and `parse_many`.
//!
//! The interpreter lets its arena allocator be replaced
//! (`PyObject_SetArenaAllocator`, PEP 445). When this module is imported it
//! installs one that wraps the interpreter's own: a new arena is taken from the
//! emptied arenas kept here if there is one of the size asked for, else from
//! the wrapped allocator; an emptied arena is kept while the kept ones total at
//! most [`KEEP_BYTES`], else given back to the wrapped allocator at once. Every
//! arena is still made and finally released by the wrapped allocator; the only
//! change is that up to [`KEEP_BYTES`] of emptied arenas stay mapped, as the
//! Rust side's allocator (mimalloc) keeps its own freed pages. pymalloc does
//! not rely on a new arena's memory being zero (it initializes each pool as it
//! takes it into use).
//!
//! The two functions are CPython's, outside the limited API the abi3 wheel is
//! built for, so they are looked up by name when the module is imported
//! (`dlsym`): where they are missing (a platform without `dlsym`, an interpreter
//! without them), nothing is installed and the interpreter's allocator works
//! alone. Setting the environment variable `IDIOLECT_KEEP_ARENAS=0` before the
//! import installs nothing either.

use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

/// The most memory of emptied arenas kept mapped for reuse: 64 MiB, what the
/// objects of about 10 MB of kindaxml take, the dialect with the most objects
/// per byte.
pub const KEEP_BYTES: usize = 64 << 20;

/// CPython's `PyObjectArenaAllocator` (Include/cpython/objimpl.h, unchanged
/// since 3.4).
#[repr(C)]
#[derive(Clone, Copy)]
struct ArenaAllocator {
    ctx: *mut c_void,
    alloc: Option<unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void>,
    free: Option<unsafe extern "C" fn(*mut c_void, *mut c_void, usize)>,
}

/// The interpreter's allocator, wrapped.
struct Wrapped(ArenaAllocator);

// SAFETY: the context pointer is the interpreter's, which calls its allocator
// from whichever thread holds an interpreter lock; it is only passed back to
// the wrapped functions.
unsafe impl Send for Wrapped {}
unsafe impl Sync for Wrapped {}

static WRAPPED: OnceLock<Wrapped> = OnceLock::new();

/// Emptied arenas kept for reuse: their addresses (as `usize`) and sizes, and
/// the sum of the sizes. A lock, not the GIL: since 3.12 interpreters with a
/// lock of their own share the arena allocator.
struct Kept {
    arenas: Vec<(usize, usize)>,
    bytes: usize,
}

static KEPT: Mutex<Kept> = Mutex::new(Kept {
    arenas: Vec::new(),
    bytes: 0,
});

unsafe extern "C" fn alloc(_ctx: *mut c_void, size: usize) -> *mut c_void {
    if let Ok(mut kept) = KEPT.lock() {
        if let Some(i) = kept.arenas.iter().rposition(|&(_, s)| s == size) {
            let (address, size) = kept.arenas.swap_remove(i);
            kept.bytes -= size;
            return address as *mut c_void;
        }
    }
    let Some(wrapped) = WRAPPED.get() else {
        return std::ptr::null_mut();
    };
    match wrapped.0.alloc {
        // SAFETY: the wrapped allocator's own function and context.
        Some(alloc) => unsafe { alloc(wrapped.0.ctx, size) },
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn free(_ctx: *mut c_void, ptr: *mut c_void, size: usize) {
    if ptr.is_null() {
        return;
    }
    if let Ok(mut kept) = KEPT.lock() {
        if kept.bytes + size <= KEEP_BYTES && kept.arenas.len() < kept.arenas.capacity() {
            kept.arenas.push((ptr as usize, size));
            kept.bytes += size;
            return;
        }
    }
    if let Some(Wrapped(ArenaAllocator {
        ctx,
        free: Some(free),
        ..
    })) = WRAPPED.get()
    {
        // SAFETY: every arena comes from the wrapped allocator (directly or
        // through the kept list), so it goes back to the same one.
        unsafe { free(*ctx, ptr, size) }
    }
}

#[cfg(unix)]
fn lookup(name: &std::ffi::CStr) -> *mut c_void {
    // SAFETY: `dlsym` with the default handle searches the process's loaded
    // objects (the interpreter among them) for a NUL-terminated name.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

#[cfg(not(unix))]
fn lookup(_name: &std::ffi::CStr) -> *mut c_void {
    std::ptr::null_mut()
}

/// Installs the arena allocator of this module's docs, once per process.
/// Called with the GIL held (from the module's initialization).
pub fn install() {
    if std::env::var_os("IDIOLECT_KEEP_ARENAS").is_some_and(|v| v == "0") {
        return;
    }
    let get = lookup(c"PyObject_GetArenaAllocator");
    let set = lookup(c"PyObject_SetArenaAllocator");
    if get.is_null() || set.is_null() || WRAPPED.get().is_some() {
        return;
    }
    type Access = unsafe extern "C" fn(*mut ArenaAllocator);
    // SAFETY: both symbols are CPython's functions of that signature
    // (`void f(PyObjectArenaAllocator *)`).
    let (get, set) = unsafe {
        (
            std::mem::transmute::<*mut c_void, Access>(get),
            std::mem::transmute::<*mut c_void, Access>(set),
        )
    };
    let mut current = ArenaAllocator {
        ctx: std::ptr::null_mut(),
        alloc: None,
        free: None,
    };
    // SAFETY: the GIL is held; `current` is a valid struct to fill.
    unsafe { get(&mut current) };
    if current.alloc.is_none() || current.free.is_none() {
        return;
    }
    if let Ok(mut kept) = KEPT.lock() {
        // Reserved once, so that keeping an arena never allocates.
        kept.arenas.reserve_exact(KEEP_BYTES / (256 << 10));
    }
    if WRAPPED.set(Wrapped(current)).is_err() {
        return;
    }
    let mut ours = ArenaAllocator {
        ctx: std::ptr::null_mut(),
        alloc: Some(alloc),
        free: Some(free),
    };
    // SAFETY: the GIL is held; the interpreter copies the struct.
    unsafe { set(&mut ours) };
}

/// How many emptied arenas are kept now and their total size in bytes, or
/// `None` when the allocator of the module docs is not installed.
pub fn kept() -> Option<(usize, usize)> {
    WRAPPED.get()?;
    let kept = KEPT.lock().ok()?;
    Some((kept.arenas.len(), kept.bytes))
}
