//! The generated Verilog as an engine: verilated, compiled with a small generated C++ shim into a
//! shared library, and called through FFI.
//!
//! Builds are automatic and cached under `target/verilator/` (or `$NANET_VERILATOR_CACHE`): the
//! Verilator runtime once per Verilator version, each design once per distinct Verilog (its hash
//! names the folder), so an unchanged design is never rebuilt; and per file the design's code
//! runs from, the library its Verilog led to (`memo/`), so a process started from the same
//! executable does not generate the Verilog again. A missing `verilator` is an error
//! that says how to install it; nothing is skipped silently.

use std::collections::hash_map::DefaultHasher;
use std::ffi::{c_char, c_void, CString};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use libloading::Library;

use super::{word_count, Design, Engine, EngineError, Port, Ps};

/// Verilator flags of every model build (part of the cache key); traced builds add `--trace`,
/// which slows every evaluation, so it is only built when a VCD is asked for.
const VERILATOR_FLAGS: &[&str] = &[
    "--cc",
    "-O3",
    "--x-assign",
    "0",
    "--x-initial",
    "0",
    "-Wno-fatal",
    "-Wno-lint",
    "-Wno-style",
];
/// Make variables of the model build at optimisation level `level` ([`model_opt`]). Verilator's
/// makefile compiles the evaluation code with `OPT_FAST` (`-Os` by default, which would undo our
/// `-O2`) and the construction and reset code (`*__Slow.cpp`, a third of a card's C++, run once
/// per instance) with `OPT_SLOW`, both after our CFLAGS. `-O0` for the slow part: the four-port
/// card's build took 120 s of CPU instead of 162 (at `-O3`, when this was chosen), and the model
/// runs as fast.
fn model_make_flags(level: &str) -> String {
    format!("OPT_FAST=-O{level} OPT_SLOW=-O0")
}
/// The environment variable that sets the evaluation code's optimisation level.
pub const OPT_ENV: &str = "NANET_VERILATOR_OPT";
/// The levels it takes: g++'s `-O0` to `-O3` and `-Og`.
pub const OPT_LEVELS: &[&str] = &["0", "1", "2", "3", "g"];
/// The optimisation level of a model's evaluation code: `NANET_VERILATOR_OPT` (one of
/// [`OPT_LEVELS`]), 3 when unset. 3 for benchmarks and long runs (the fastest model); `make test`,
/// whose runs are short, takes g: the four-port Gen2 card's model builds in 51 s of CPU instead
/// of 65 at `-O1` and 136 at `-O3`, and runs as fast as at `-O1` (the quick card benchmark 7.1 s
/// and 7.4, one after the other). The level is part of the cache key, so each level has its own build.
pub fn model_opt() -> Result<&'static str, EngineError> {
    match std::env::var(OPT_ENV) {
        Err(std::env::VarError::NotPresent) => Ok("3"),
        Ok(v) => OPT_LEVELS
            .iter()
            .copied()
            .find(|l| *l == v.trim())
            .ok_or_else(|| {
                EngineError::Setting(format!(
                    "{OPT_ENV}={v:?}: give the model's C++ optimisation level, 0 to 3 or g \
                     (g++'s -O0 to -O3 or -Og; 3 when unset)"
                ))
            }),
        Err(e) => Err(EngineError::Setting(format!("{OPT_ENV}: {e}"))),
    }
}
/// Compiler flags of the runtime, the shim and the model. `-march=native` lets the compiler
/// vectorise the core's combinational logic; the cache key holds the CPU's features, so a library
/// is never used on another kind of CPU.
const CXX_FLAGS: &[&str] = &["-fPIC", "-O2", "-march=native", "-std=c++17"];
/// Runtime sources compiled into every model library.
const RUNTIME_SOURCES: &[&str] = &[
    "verilated.cpp",
    "verilated_vcd_c.cpp",
    "verilated_threads.cpp",
];

/// Serialises builds within a process (tests run in parallel threads); across processes (cargo
/// nextest runs every test in its own) each build's lock file ([`lock_build`]) keeps two from
/// compiling the same design.
static BUILD_LOCK: Mutex<()> = Mutex::new(());
/// A loaded library and the path it was loaded from.
type LoadedLibrary = (PathBuf, Arc<Library>);
/// Libraries loaded so far, by path.
static LOADED: OnceLock<Mutex<Vec<LoadedLibrary>>> = OnceLock::new();

/// What the last build of a design did (for benchmarks and progress output).
#[derive(Clone, Debug)]
pub struct BuildReport {
    pub library: PathBuf,
    /// False when the cached library was used.
    pub built: bool,
    pub seconds: f64,
}

fn cache_root() -> PathBuf {
    match std::env::var_os("NANET_VERILATOR_CACHE") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("target")
            .join("verilator"),
    }
}

fn io_err(what: &str, p: &Path, e: std::io::Error) -> EngineError {
    EngineError::Io(format!("{what} {}: {e}", p.display()))
}

/// `verilator --version`, asked once per process (each ask starts Perl: ~40 ms, and benches that
/// build an engine per case would spend most of their time there).
fn verilator_version() -> Result<String, EngineError> {
    static VERSION: OnceLock<Result<String, String>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            let out = Command::new("verilator")
                .arg("--version")
                .output()
                .map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
            }
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        })
        .clone()
        .map_err(EngineError::VerilatorMissing)
}

/// Verilator's include directory, asked once per process (as [`verilator_version`]).
fn verilator_include() -> Result<PathBuf, EngineError> {
    static INCLUDE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    INCLUDE
        .get_or_init(|| {
            let out = Command::new("verilator")
                .args(["--getenv", "VERILATOR_ROOT"])
                .output()
                .map_err(|e| e.to_string())?;
            let root = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let inc = Path::new(&root).join("include");
            if !inc.join("verilated.h").exists() {
                return Err(format!("no verilated.h under {}", inc.display()));
            }
            Ok(inc)
        })
        .clone()
        .map_err(EngineError::VerilatorMissing)
}

fn run(top: &str, step: &str, mut cmd: Command, log: &Path) -> Result<(), EngineError> {
    let out = cmd.output().map_err(|e| EngineError::Build {
        top: top.into(),
        step: format!("{step}: {e}"),
        log: log.display().to_string(),
    })?;
    let mut text = format!("$ {cmd:?}\n");
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let mut prev = std::fs::read_to_string(log).unwrap_or_default();
    prev.push_str(&text);
    std::fs::write(log, prev).map_err(|e| io_err("writing", log, e))?;
    if !out.status.success() {
        let tail: String = text
            .lines()
            .rev()
            .take(15)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        return Err(EngineError::Build {
            top: top.into(),
            step: step.into(),
            log: format!("{}\n{tail}", log.display()),
        });
    }
    Ok(())
}

/// The CPU's feature flags (what `-march=native` compiles for), for the cache key.
fn cpu_features() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("flags"))
                .map(str::to_string)
        })
        .unwrap_or_default()
}

fn hash_of(parts: &[&str]) -> String {
    let mut h = DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Builds (or finds) the Verilator runtime archive, compiled position-independent.
fn runtime(root: &Path, version: &str, inc: &Path) -> Result<PathBuf, EngineError> {
    let dir = root.join(format!(
        "runtime-{}",
        hash_of(&[version, &CXX_FLAGS.join(" "), &cpu_features()])
    ));
    let lib = dir.join("libverilated_pic.a");
    if lib.exists() {
        return Ok(lib);
    }
    let _lock = lock_build(root, &dir)?;
    if lib.exists() {
        return Ok(lib); // another process built it while this one waited
    }
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| io_err("creating", &tmp, e))?;
    let log = tmp.join("build.log");
    let mut objs = vec![];
    for src in RUNTIME_SOURCES {
        let obj = tmp.join(src.replace(".cpp", ".o"));
        let mut c = Command::new("g++");
        c.args(CXX_FLAGS)
            .arg("-I")
            .arg(inc)
            .arg("-I")
            .arg(inc.join("vltstd"))
            .arg("-c")
            .arg(inc.join(src))
            .arg("-o")
            .arg(&obj);
        run("verilator runtime", &format!("g++ {src}"), c, &log)?;
        objs.push(obj);
    }
    let mut ar = Command::new("ar");
    ar.arg("rcs")
        .arg(tmp.join("libverilated_pic.a"))
        .args(&objs);
    run("verilator runtime", "ar", ar, &log)?;
    publish(&tmp, &dir)?;
    Ok(lib)
}

/// Takes the lock file of the build that makes `dir` in the cache (`.NAME.lock` beside it;
/// released when the returned file is dropped): parallel test processes wait for one build of a
/// design instead of each compiling it (minutes of C++ on a small machine), while different
/// designs build at once (one at a time left a core idle through each build's single-threaded
/// steps: verilating, linking).
fn lock_build(root: &Path, dir: &Path) -> Result<std::fs::File, EngineError> {
    let (file, path) = open_build_lock(root, dir)?;
    file.lock().map_err(|e| io_err("locking", &path, e))?;
    Ok(file)
}

/// Opens (creating it) the lock file of the build that makes `dir`, unlocked.
fn open_build_lock(root: &Path, dir: &Path) -> Result<(std::fs::File, PathBuf), EngineError> {
    std::fs::create_dir_all(root).map_err(|e| io_err("creating", root, e))?;
    let path = root.join(format!(
        ".{}.lock",
        dir.file_name().unwrap_or_default().to_string_lossy()
    ));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| io_err("opening", &path, e))?;
    Ok((file, path))
}

/// Moves a finished build into place (another process may have finished first: keep theirs).
fn publish(tmp: &Path, dir: &Path) -> Result<(), EngineError> {
    if std::fs::rename(tmp, dir).is_err() {
        if dir.exists() {
            let _ = std::fs::remove_dir_all(tmp);
        } else {
            return Err(EngineError::Io(format!(
                "cannot move {} to {}",
                tmp.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// C++ member of the Verilated model for a Verilog port name (`$` is escaped as `__024`).
fn member(port: &str) -> String {
    port.replace('$', "__024")
}

fn mask(width: usize) -> String {
    if width >= 64 {
        "0xFFFFFFFFFFFFFFFFull".into()
    } else {
        format!("0x{:X}ull", (1u64 << width) - 1)
    }
}

/// The C++ shim: packed words in and out, clocks, eval, VCD.
fn shim_source(
    top: &str,
    clocks: &[Port],
    inputs: &[Port],
    outputs: &[Port],
    traced: bool,
) -> String {
    let model = format!("V{top}");
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// Generated by nanet-sim: FFI shim around the Verilated model of {top}."
    );
    let _ = writeln!(s, "#include \"{model}.h\"\n#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n#include <cstdint>\n");
    let _ = writeln!(
        s,
        "struct Handle {{\n  VerilatedContext ctx;\n  {model}* m;\n  VerilatedVcdC* vcd = nullptr;"
    );
    let _ = writeln!(
        s,
        "  Handle() {{ ctx.traceEverOn(true); m = new {model}(&ctx, \"{top}\"); }}"
    );
    let _ = writeln!(
        s,
        "  ~Handle() {{ if (vcd) {{ vcd->close(); delete vcd; }} m->final(); delete m; }}\n}};\n"
    );
    let _ = writeln!(s, "extern \"C\" {{");
    let _ = writeln!(s, "void* nanet_model_new() {{ return new Handle(); }}");
    let _ = writeln!(
        s,
        "void nanet_model_free(void* h) {{ delete static_cast<Handle*>(h); }}"
    );
    let _ = writeln!(
        s,
        "void nanet_model_eval(void* h) {{ static_cast<Handle*>(h)->m->eval(); }}"
    );
    let _ = writeln!(s, "void nanet_model_set_inputs(void* h, const uint64_t* w) {{\n  {model}* m = static_cast<Handle*>(h)->m;");
    let mut at = 0;
    for p in inputs {
        if p.width > 64 {
            // Verilator keeps wide ports as arrays of 32-bit words (VlWide).
            for j in 0..p.width.div_ceil(32) {
                let bits = (p.width - 32 * j).min(32);
                let _ = writeln!(
                    s,
                    "  m->{}[{j}] = static_cast<uint32_t>(w[{}] >> {}) & {};",
                    member(&p.name),
                    at + j / 2,
                    32 * (j % 2),
                    mask(bits)
                );
            }
        } else {
            let _ = writeln!(s, "  m->{} = w[{at}] & {};", member(&p.name), mask(p.width));
        }
        at += p.words();
    }
    let _ = writeln!(s, "}}\nvoid nanet_model_get_outputs(void* h, uint64_t* w) {{\n  {model}* m = static_cast<Handle*>(h)->m;");
    let mut at = 0;
    for p in outputs {
        if p.width > 64 {
            for k in 0..p.words() {
                let _ = writeln!(s, "  w[{}] = 0;", at + k);
            }
            for j in 0..p.width.div_ceil(32) {
                let _ = writeln!(
                    s,
                    "  w[{}] |= static_cast<uint64_t>(m->{}[{j}]) << {};",
                    at + j / 2,
                    member(&p.name),
                    32 * (j % 2)
                );
            }
        } else {
            let _ = writeln!(
                s,
                "  w[{at}] = static_cast<uint64_t>(m->{});",
                member(&p.name)
            );
        }
        at += p.words();
    }
    let _ = writeln!(s, "}}\nvoid nanet_model_set_clock(void* h, uint32_t c, uint8_t v) {{\n  {model}* m = static_cast<Handle*>(h)->m;\n  switch (c) {{");
    for (i, p) in clocks.iter().enumerate() {
        let _ = writeln!(s, "    case {i}: m->{} = v & 1; break;", member(&p.name));
    }
    let _ = writeln!(s, "  }}\n}}");
    if traced {
        let _ = writeln!(s, "int nanet_model_trace_open(void* hp, const char* path) {{\n  Handle* h = static_cast<Handle*>(hp);\n  if (h->vcd) return -1;\n  h->vcd = new VerilatedVcdC;\n  h->m->trace(h->vcd, 99);\n  h->vcd->open(path);\n  return h->vcd->isOpen() ? 0 : -1;\n}}");
    } else {
        let _ = writeln!(
            s,
            "int nanet_model_trace_open(void*, const char*) {{ return -2; }}"
        );
    }
    let _ = writeln!(s, "void nanet_model_trace_dump(void* hp, uint64_t t) {{ Handle* h = static_cast<Handle*>(hp); if (h->vcd) h->vcd->dump(t); }}");
    let _ = writeln!(s, "}}");
    s
}

/// What building a design's library needs of the design, as values: the code that builds and
/// loads it is compiled once, not again for every design type (48 of them in the module tests).
#[derive(Clone, Copy)]
pub struct DesignRef {
    pub top: &'static str,
    /// The design's Rust type (part of the memo's key).
    pub type_name: &'static str,
    pub verilog: fn() -> String,
    pub clocks: fn() -> Vec<Port>,
    pub inputs: fn() -> Vec<Port>,
    pub outputs: fn() -> Vec<Port>,
}

impl DesignRef {
    pub fn of<D: Design>() -> Self {
        Self {
            top: D::TOP,
            type_name: std::any::type_name::<D>(),
            verilog: D::verilog,
            clocks: D::clocks,
            inputs: D::inputs,
            outputs: D::outputs,
        }
    }
}

/// Builds (or finds in the cache at `root`) the shared library of `design`, with VCD support if
/// `traced`. Generating a card's Verilog takes seconds, and every
/// test process builds its engine anew; so the library a design's Verilog led to is remembered
/// per file the design's code runs from ([`code_identity`]): the same file generates the same
/// Verilog, and the library is taken without generating it again.
pub fn build_at(root: &Path, design: &DesignRef, traced: bool) -> Result<BuildReport, EngineError> {
    let started = Instant::now();
    // (Read first: a setting that cannot be used is reported before seconds of Verilog
    // generation.)
    let make_flags = model_make_flags(model_opt()?);
    let memo = memo_path(root, design, traced, &make_flags);
    if let Some(lib) = memo.as_ref().and_then(|m| remembered(root, m)) {
        return Ok(BuildReport {
            library: lib,
            built: false,
            seconds: started.elapsed().as_secs_f64(),
        });
    }
    let ports = ((design.clocks)(), (design.inputs)(), (design.outputs)());
    let report = build_verilog_at(root, design.top, &(design.verilog)(), &ports, traced)?;
    if let Some(memo) = memo {
        remember(root, &memo, &report.library);
    }
    Ok(report)
}

/// Where the library of `design` built from the file its code runs from is remembered (`None`
/// when that file cannot be told).
fn memo_path(root: &Path, design: &DesignRef, traced: bool, make_flags: &str) -> Option<PathBuf> {
    let code = code_identity(design.verilog as *const ())?;
    // (What else keys the library: a memo is never older than the tools that built it.)
    let key = hash_of(&[
        &code,
        design.type_name,
        design.top,
        if traced { "traced" } else { "plain" },
        &verilator_version().ok()?,
        &VERILATOR_FLAGS.join(" "),
        &CXX_FLAGS.join(" "),
        make_flags,
        &cpu_features(),
    ]);
    Some(root.join("memo").join(format!("{}-{key}", design.top)))
}

/// The library `memo` names, if it is still in the cache.
fn remembered(root: &Path, memo: &Path) -> Option<PathBuf> {
    let name = std::fs::read_to_string(memo).ok()?;
    let name = name.trim();
    (!name.is_empty())
        .then(|| root.join(name))
        .filter(|lib| lib.is_file())
}

/// The file the code at `addr` runs from (the executable, or a shared library such as
/// `libnanet_c.so`) as it is mapped into this process: its device, path, inode, size and
/// modification time ([`file_identity`]); `None` if it cannot be told (then nothing is
/// remembered).
fn code_identity(addr: *const ()) -> Option<String> {
    let addr = addr as usize;
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| {
        let range = l.split_whitespace().next().unwrap_or("");
        let (lo, hi) = range.split_once('-').unwrap_or(("", ""));
        let lo = usize::from_str_radix(lo, 16).unwrap_or(usize::MAX);
        let hi = usize::from_str_radix(hi, 16).unwrap_or(0);
        (lo..hi).contains(&addr)
    })?;
    // start-end perms offset dev inode path (the path may hold spaces)
    let fields: Vec<&str> = line.splitn(6, char::is_whitespace).collect();
    let inode: u64 = fields.get(4)?.parse().ok()?;
    file_identity(Path::new(fields.get(5)?.trim()), inode, process_start()?)
}

/// The identity of the file at `path`, mapped with inode `inode` by a process started at
/// `started` (seconds since the epoch): `None` unless it is that very file, unchanged since
/// before the process started. A file rebuilt since is another inode (or a " (deleted)" path);
/// one overwritten in place keeps its inode but not its modification time, and the code this
/// process runs may be the old one: neither is trusted.
fn file_identity(path: &Path, inode: u64, started: f64) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.mtime() as f64 + meta.mtime_nsec() as f64 * 1e-9;
    // (A margin of a few clock ticks, the start time's unit.)
    let before_start = modified < started - 0.05;
    (path.is_absolute() && inode != 0 && meta.ino() == inode && before_start).then(|| {
        format!(
            "{} {} {} {} {}.{}",
            meta.dev(),
            path.display(),
            meta.ino(),
            meta.size(),
            meta.mtime(),
            meta.mtime_nsec()
        )
    })
}

/// When this process started, in seconds since the epoch (the boot time in `/proc/stat` plus the
/// start in clock ticks in `/proc/self/stat`).
fn process_start() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // pid (comm) state ppid ...: the start time is the 22nd field, the 20th after the comm.
    let after_comm = &stat[stat.rfind(')')? + 1..];
    let ticks: f64 = after_comm.split_whitespace().nth(19)?.parse().ok()?;
    let boot: f64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_s > 0).then(|| boot + ticks / per_s as f64)
}

/// Writes `memo`: the library's folder and name under `root` (whole: written aside, then
/// renamed). A failure only costs the next process the Verilog's generation.
fn remember(root: &Path, memo: &Path, lib: &Path) {
    let (Some(dir), Ok(rel)) = (memo.parent(), lib.strip_prefix(root)) else {
        return;
    };
    // (Per process and per call: threads of one process may remember the same design at once.)
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = memo.with_extension(format!("tmp{}-{call}", std::process::id()));
    let _ = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&tmp, rel.to_string_lossy().as_bytes()))
        .and_then(|_| std::fs::rename(&tmp, memo));
}

/// The folder of the library built from `inputs` (Verilator's version, the Verilog, the shim and
/// Verilator's flags) with the compiler's flags, the model's make flags (its optimisation level)
/// and the CPU's features: a change of any is another library.
fn library_dir(root: &Path, top: &str, traced: bool, inputs: &[&str], make_flags: &str) -> PathBuf {
    let cxx = CXX_FLAGS.join(" ");
    let cpu = cpu_features();
    let key = hash_of(&[inputs, &[cxx.as_str(), make_flags, cpu.as_str()]].concat());
    root.join(format!(
        "{top}-{}{key}",
        if traced { "traced-" } else { "" }
    ))
}

/// Builds (or finds) the library of the Verilog `verilog` whose top `top` has the given (clocks,
/// inputs, outputs).
pub fn build_verilog_at(
    root: &Path,
    top: &str,
    verilog: &str,
    ports: &(Vec<Port>, Vec<Port>, Vec<Port>),
    traced: bool,
) -> Result<BuildReport, EngineError> {
    let started = Instant::now();
    let make_flags = model_make_flags(model_opt()?);
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let version = verilator_version()?;
    let inc = verilator_include()?;
    let shim = shim_source(top, &ports.0, &ports.1, &ports.2, traced);
    let mut flags: Vec<&str> = VERILATOR_FLAGS.to_vec();
    if traced {
        flags.push("--trace");
    }
    let dir = library_dir(
        root,
        top,
        traced,
        &[&version, verilog, &shim, &flags.join(" ")],
        &make_flags,
    );
    let lib = dir.join(format!("lib{top}.so"));
    let cached = |lib: PathBuf| BuildReport {
        library: lib,
        built: false,
        seconds: started.elapsed().as_secs_f64(),
    };
    if lib.exists() {
        return Ok(cached(lib));
    }
    let _file_lock = lock_build(root, &dir)?;
    if lib.exists() {
        return Ok(cached(lib)); // another process built it while this one waited
    }
    let runtime = runtime(root, &version, &inc)?;
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| io_err("creating", &tmp, e))?;
    let v_path = tmp.join(format!("{top}.v"));
    std::fs::write(&v_path, verilog).map_err(|e| io_err("writing", &v_path, e))?;
    let shim_path = tmp.join("shim.cpp");
    std::fs::write(&shim_path, &shim).map_err(|e| io_err("writing", &shim_path, e))?;
    let log = tmp.join("build.log");
    let mut v = Command::new("verilator");
    v.args(&flags)
        .args(["--top-module", top, "--Mdir"])
        .arg(tmp.join("obj"))
        // (Its makefile's optimisation variables: see `model_make_flags`.)
        .args(["--build", "-j", "2", "-MAKEFLAGS", &make_flags, "-CFLAGS"])
        .arg(CXX_FLAGS.join(" "))
        .arg(&v_path);
    run(top, "verilator", v, &log)?;
    let mut g = Command::new("g++");
    g.arg("-shared")
        .args(CXX_FLAGS)
        .arg("-I")
        .arg(tmp.join("obj"))
        .arg("-I")
        .arg(&inc)
        .arg("-I")
        .arg(inc.join("vltstd"))
        .arg(&shim_path)
        .arg(tmp.join("obj").join(format!("V{top}__ALL.a")))
        .arg(&runtime)
        .arg("-lpthread")
        .arg("-o")
        .arg(tmp.join(format!("lib{top}.so")));
    run(top, "g++ -shared", g, &log)?;
    publish(&tmp, &dir)?;
    Ok(BuildReport {
        library: lib,
        built: true,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn load(path: &Path) -> Result<Arc<Library>, EngineError> {
    let loaded = LOADED.get_or_init(|| Mutex::new(vec![]));
    let mut loaded = loaded.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, l)) = loaded.iter().find(|(p, _)| p == path) {
        return Ok(l.clone());
    }
    // SAFETY: the library is our own generated shim; its initialisers only set up Verilator.
    let lib = unsafe { Library::new(path) }.map_err(|e| EngineError::Load {
        path: path.display().to_string(),
        msg: e.to_string(),
    })?;
    let lib = Arc::new(lib);
    loaded.push((path.to_path_buf(), lib.clone()));
    Ok(lib)
}

type NewFn = unsafe extern "C" fn() -> *mut c_void;
type HandleFn = unsafe extern "C" fn(*mut c_void);
type WordsInFn = unsafe extern "C" fn(*mut c_void, *const u64);
type WordsOutFn = unsafe extern "C" fn(*mut c_void, *mut u64);
type ClockFn = unsafe extern "C" fn(*mut c_void, u32, u8);
type TraceOpenFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> i32;
type TraceDumpFn = unsafe extern "C" fn(*mut c_void, u64);

/// A function of the shim, by name.
///
/// # Safety
/// `T` must be the function pointer type of that symbol.
unsafe fn symbol<T: Copy>(lib: &Library, path: &str, name: &str) -> Result<T, EngineError> {
    lib.get::<T>(name.as_bytes())
        .map(|s| *s)
        .map_err(|_| EngineError::Load {
            path: path.to_string(),
            msg: format!("missing symbol {name}"),
        })
}

/// One instance of a Verilated design.
pub struct VerilatorEngine {
    _lib: Arc<Library>,
    handle: *mut c_void,
    free: HandleFn,
    eval: HandleFn,
    set_inputs: WordsInFn,
    get_outputs: WordsOutFn,
    set_clock: ClockFn,
    trace_open: TraceOpenFn,
    trace_dump: TraceDumpFn,
    n_inputs: usize,
    n_outputs: usize,
}

// SAFETY: the handle is owned by this engine and only used through `&mut self`.
unsafe impl Send for VerilatorEngine {}

impl VerilatorEngine {
    /// Builds (or reuses) design `D`'s library and instantiates the model; only a `traced` model
    /// can write a VCD.
    pub fn new(design: &DesignRef, traced: bool) -> Result<Self, EngineError> {
        let report = build_at(&cache_root(), design, traced)?;
        let lib = load(&report.library)?;
        let path = report.library.display().to_string();
        // SAFETY: every symbol is one of the shim's extern "C" functions, with the signature of
        // the field it is stored in.
        unsafe {
            let new: NewFn = symbol(&lib, &path, "nanet_model_new")?;
            Ok(Self {
                free: symbol(&lib, &path, "nanet_model_free")?,
                eval: symbol(&lib, &path, "nanet_model_eval")?,
                set_inputs: symbol(&lib, &path, "nanet_model_set_inputs")?,
                get_outputs: symbol(&lib, &path, "nanet_model_get_outputs")?,
                set_clock: symbol(&lib, &path, "nanet_model_set_clock")?,
                trace_open: symbol(&lib, &path, "nanet_model_trace_open")?,
                trace_dump: symbol(&lib, &path, "nanet_model_trace_dump")?,
                handle: new(),
                _lib: lib.clone(),
                n_inputs: word_count(&(design.inputs)()),
                n_outputs: word_count(&(design.outputs)()),
            })
        }
    }
}

impl Drop for VerilatorEngine {
    fn drop(&mut self) {
        // SAFETY: the handle came from nanet_model_new and is freed once.
        unsafe { (self.free)(self.handle) }
    }
}

impl Engine for VerilatorEngine {
    fn name(&self) -> &'static str {
        "verilator"
    }
    fn apply(&mut self, inputs: &[u64]) {
        assert_eq!(inputs.len(), self.n_inputs);
        // SAFETY: `inputs` holds one word per input port, as the shim reads.
        unsafe { (self.set_inputs)(self.handle, inputs.as_ptr()) }
    }
    fn set_clock(&mut self, clock: usize, level: bool) {
        // SAFETY: plain call on our handle.
        unsafe { (self.set_clock)(self.handle, clock as u32, level as u8) }
    }
    fn settle(&mut self) {
        // SAFETY: plain call on our handle.
        unsafe { (self.eval)(self.handle) }
    }
    fn outputs(&mut self, out: &mut [u64]) {
        assert_eq!(out.len(), self.n_outputs);
        // SAFETY: `out` has room for one word per output port, as the shim writes.
        unsafe { (self.get_outputs)(self.handle, out.as_mut_ptr()) }
    }
    fn trace_vcd(&mut self, path: &Path) -> Result<(), EngineError> {
        let c = CString::new(path.display().to_string()).map_err(|e| EngineError::Vcd {
            path: path.display().to_string(),
            msg: e.to_string(),
        })?;
        // SAFETY: `c` outlives the call; the shim copies the path.
        let rc = unsafe { (self.trace_open)(self.handle, c.as_ptr()) };
        if rc == -2 {
            return Err(EngineError::Vcd {
                path: path.display().to_string(),
                msg: "this Verilator model was built without tracing: ask for the VCD when the simulation is created".into(),
            });
        }
        if rc != 0 {
            return Err(EngineError::Vcd {
                path: path.display().to_string(),
                msg: "Verilator could not open it".into(),
            });
        }
        Ok(())
    }
    fn trace_sample(&mut self, time_ps: Ps) {
        // SAFETY: plain call on our handle.
        unsafe { (self.trace_dump)(self.handle, time_ps) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::designs::OffloadCoreDesign;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Times [`Counted`]'s Verilog was generated.
    static GENERATED: AtomicUsize = AtomicUsize::new(0);

    /// The offload core, counting its Verilog's generations.
    struct Counted;

    impl Design for Counted {
        type Block = <OffloadCoreDesign as Design>::Block;
        type In = <OffloadCoreDesign as Design>::In;
        type Out = <OffloadCoreDesign as Design>::Out;
        const TOP: &'static str = OffloadCoreDesign::TOP;
        fn clocks() -> Vec<Port> {
            OffloadCoreDesign::clocks()
        }
        fn inputs() -> Vec<Port> {
            OffloadCoreDesign::inputs()
        }
        fn outputs() -> Vec<Port> {
            OffloadCoreDesign::outputs()
        }
        fn pack(i: &Self::In, words: &mut [u64]) {
            OffloadCoreDesign::pack(i, words)
        }
        fn unpack(words: &[u64]) -> Self::Out {
            OffloadCoreDesign::unpack(words)
        }
        fn apply_model(b: &mut Self::Block, words: &[u64]) {
            OffloadCoreDesign::apply_model(b, words)
        }
        fn sample_model(b: &Self::Block, words: &mut [u64]) {
            OffloadCoreDesign::sample_model(b, words)
        }
        fn set_model_clock(b: &mut Self::Block, clock: usize, level: bool) {
            OffloadCoreDesign::set_model_clock(b, clock, level)
        }
        fn block() -> Self::Block {
            OffloadCoreDesign::block()
        }
        fn verilog() -> String {
            GENERATED.fetch_add(1, Ordering::SeqCst);
            OffloadCoreDesign::verilog()
        }
        fn model() -> Result<Box<dyn Engine>, EngineError> {
            crate::engine::model::model_engine::<Self>()
        }
    }

    #[test]
    fn a_design_built_from_this_file_takes_its_library_without_generating_the_verilog_again() {
        let root = cache_root();
        let first =
            build_at(&root, &DesignRef::of::<Counted>(), false).unwrap_or_else(|e| panic!("{e}"));
        let generated = GENERATED.load(Ordering::SeqCst);
        let again =
            build_at(&root, &DesignRef::of::<Counted>(), false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            GENERATED.load(Ordering::SeqCst),
            generated,
            "the remembered library is taken without generating the Verilog"
        );
        assert!(!again.built);
        assert_eq!(again.library, first.library);
        // The same Verilog under another design's name is remembered apart.
        let flags = model_make_flags(model_opt().expect("a usable level"));
        let memo = memo_path(&root, &DesignRef::of::<Counted>(), false, &flags)
            .expect("this test's file is told");
        assert_ne!(
            Some(&memo),
            memo_path(&root, &DesignRef::of::<OffloadCoreDesign>(), false, &flags).as_ref()
        );
        assert_ne!(
            Some(&memo),
            memo_path(&root, &DesignRef::of::<Counted>(), true, &flags).as_ref()
        );
        // A model built at another optimisation level is remembered apart.
        for level in OPT_LEVELS.iter().filter(|l| model_make_flags(l) != flags) {
            assert_ne!(
                Some(&memo),
                memo_path(
                    &root,
                    &DesignRef::of::<Counted>(),
                    false,
                    &model_make_flags(level)
                )
                .as_ref(),
                "level {level}"
            );
        }
        assert_eq!(remembered(&root, &memo), Some(first.library));
    }

    #[test]
    fn a_model_at_another_optimisation_level_is_another_library() {
        let root = Path::new("/cache");
        let inputs = ["5.006", "module top;", "shim", "-Wall"];
        let at = |level: &str| library_dir(root, "top", false, &inputs, &model_make_flags(level));
        for (i, a) in OPT_LEVELS.iter().enumerate() {
            for b in &OPT_LEVELS[i + 1..] {
                assert_ne!(at(a), at(b), "levels {a} and {b}");
            }
        }
        assert!(at("g").starts_with(root) && at("g").to_string_lossy().contains("/top-"));
    }

    #[test]
    fn the_code_is_told_by_its_mapped_file_and_a_library_gone_is_not_remembered() {
        let here: fn() = || {};
        let code = code_identity(here as *const ()).expect("this test's code is in a file");
        let exe = std::env::current_exe().unwrap();
        assert!(code.contains(&format!(" {} ", exe.display())), "{code}");
        assert_eq!(code_identity(here as *const ()), Some(code));
        assert_eq!(
            code_identity(16 as *const ()),
            None,
            "an address nothing maps"
        );
        let root = std::env::temp_dir().join(format!("nanet-memo-test-{}", std::process::id()));
        std::fs::create_dir_all(root.join("lib-dir")).unwrap();
        std::fs::write(root.join("lib-dir").join("libx.so"), b"").unwrap();
        let memo = root.join("memo").join("x-1");
        remember(&root, &memo, &root.join("lib-dir").join("libx.so"));
        assert_eq!(
            remembered(&root, &memo),
            Some(root.join("lib-dir").join("libx.so"))
        );
        std::fs::remove_file(root.join("lib-dir").join("libx.so")).unwrap();
        assert_eq!(remembered(&root, &memo), None, "its library is gone");
        std::fs::write(&memo, b"").unwrap();
        assert_eq!(
            remembered(&root, &memo),
            None,
            "an empty memo names nothing"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_file_changed_since_the_process_started_or_another_inode_is_not_trusted() {
        use std::os::unix::fs::MetadataExt;
        let started = process_start().expect("this process's start time");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            started <= now && started > now - 3600.0,
            "{started} vs {now}"
        );
        let file = std::env::temp_dir().join(format!("nanet-identity-{}", std::process::id()));
        std::fs::write(&file, b"code").unwrap();
        let inode = std::fs::metadata(&file).unwrap().ino();
        // Written just now: after this process started (as if overwritten in place).
        assert_eq!(file_identity(&file, inode, started), None);
        // For a process started a minute from now, it is the file it mapped...
        let later = now + 60.0;
        let id = file_identity(&file, inode, later).expect("unchanged since before the start");
        // ...but not under another inode, nor once its content (size) changes.
        assert_eq!(file_identity(&file, inode + 1, later), None);
        std::fs::write(&file, b"other code").unwrap();
        assert_ne!(file_identity(&file, inode, later), Some(id));
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn a_build_holds_its_lock_against_other_processes_and_leaves_other_builds_free() {
        let root = std::env::temp_dir().join(format!("nanet-lock-test-{}", std::process::id()));
        let (a, b) = (root.join("design_a-1"), root.join("design_b-2"));
        let held = lock_build(&root, &a).unwrap();
        // A second open file description stands for another process (flock locks are per open
        // file, so this blocks exactly as another process would).
        let (other, _) = open_build_lock(&root, &a).unwrap();
        assert!(
            matches!(other.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
            "the build's lock is not held while it builds"
        );
        // Another design's build takes a lock of its own, free while this one is held.
        let (another, _) = open_build_lock(&root, &b).unwrap();
        another
            .try_lock()
            .expect("another design's build waits for this one");
        drop(another);
        drop(held);
        other
            .try_lock()
            .expect("the lock is released with the build");
        let _ = std::fs::remove_dir_all(&root);
    }
}
