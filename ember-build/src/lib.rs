#![doc = include_str!("../README.md")]

mod direct;
pub mod patch;
pub mod program;

use hal_core::module::format::{pool_offset, PREAMBLE_BYTES};
use hal_core::module::{Module, ModuleError, Seq, Site};
use hal_local::kernels::tflite::TunedVariant;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::io;
use std::path::{Path, PathBuf};

/// Embeds one module file: configure with the builder methods, then [`Embed::build_rs`] (in a
/// build script), [`Embed::write_to_out_dir`] or [`Embed::generate`].
#[derive(Debug, Clone)]
pub struct Embed {
    module_path: PathBuf,
    arena_bytes: Option<u64>,
    /// Kernel name → Rust path of its `Kernel`; a later entry for a name replaces an earlier.
    linked: BTreeMap<String, String>,
    /// The Rust target the module is lowered for; `None`: Cargo's `TARGET`.
    target: Option<String>,
    /// Whether to emit the first function as a static program too.
    program: bool,
    /// Whether the program may run stages patch by patch where it would not fit otherwise
    /// ([`program::Patches::Off`]), or always runs the stages that lower its arena most.
    patches: program::Patches,
    /// Whether to print the patch-based stages chosen as Cargo warnings (a build script).
    announce: bool,
}

/// Why a module cannot be embedded. Every message names the module file.
#[derive(Debug)]
#[non_exhaustive]
pub enum EmbedError {
    /// A TFLite model could not be imported: an unsupported op, type or option (named with
    /// its index), or a malformed file.
    Import {
        /// The model file.
        module: PathBuf,
        /// What the importer said.
        message: String,
    },
    /// The module file could not be read.
    Read {
        /// The module file.
        module: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not a valid module ([`Module::parse`] refused it).
    Invalid {
        /// The module file.
        module: PathBuf,
        /// What is wrong, and where.
        error: ModuleError,
    },
    /// [`Embed::arena_bytes`] was not called.
    NoArena {
        /// The module file.
        module: PathBuf,
    },
    /// A path given to [`Embed::kernels`] is not a Rust path.
    BadKernelPath {
        /// The module file.
        module: PathBuf,
        /// The kernel's name.
        kernel: String,
        /// What was given as its path.
        path: String,
    },
    /// An executable names a kernel that is not linked.
    UnknownKernel {
        /// The module file.
        module: PathBuf,
        /// The executable's index.
        executable: u32,
        /// The kernel it names.
        kernel: String,
        /// The names of the kernels that are linked, sorted.
        linked: Vec<String>,
    },
    /// A function's memory plan needs a bigger arena than the board gives.
    ArenaTooSmall {
        /// The module file.
        module: PathBuf,
        /// The function's name.
        function: String,
        /// The arena its plan needs, in bytes.
        needed: u64,
        /// The board's arena, in bytes.
        available: u64,
        /// For a static program run patch by patch: the arena it needs with every layer
        /// whole (`needed` is with its patch-based stages).
        whole: Option<u64>,
    },
    /// The function cannot be a static program ([`program::plan_program`] refused it).
    Program {
        /// The module file.
        module: PathBuf,
        /// Why.
        message: String,
    },
    /// A dispatch of the static program, run once at build time, was refused by its kernel:
    /// the firmware would refuse it too.
    Refused {
        /// The module file.
        module: PathBuf,
        /// The step (dispatches and copies in order, barriers not counted).
        step: u32,
        /// The kernel it calls.
        kernel: String,
        /// What the kernel said.
        message: String,
    },
    /// [`Embed::write_to_out_dir`] was called outside a build script (`OUT_DIR` is not set).
    NoOutDir {
        /// The module file.
        module: PathBuf,
    },
    /// A generated file could not be written.
    Write {
        /// The module file.
        module: PathBuf,
        /// The file being written.
        file: PathBuf,
        /// Why.
        source: io::Error,
    },
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmbedError::Import { module, message } => {
                write!(f, "model {}: {message}", module.display())
            }
            EmbedError::Read { module, source } => {
                write!(
                    f,
                    "module {}: cannot read the file: {source}",
                    module.display()
                )
            }
            EmbedError::Invalid { module, error } => write!(
                f,
                "module {}: not a valid Ember module: {}: {}",
                module.display(),
                error.site,
                error.problem
            ),
            EmbedError::NoArena { module } => write!(
                f,
                "module {}: no arena size given; call `Embed::arena_bytes` with the board's \
                 arena (its `LocalConfig::transient_bytes`)",
                module.display()
            ),
            EmbedError::BadKernelPath {
                module,
                kernel,
                path,
            } => write!(
                f,
                "module {}: kernel `{kernel}` is linked as `{path}`, which is not a Rust path \
                 (like `crate::kernels::CONV2D_F32`)",
                module.display()
            ),
            EmbedError::UnknownKernel {
                module,
                executable,
                kernel,
                linked,
            } => {
                write!(
                    f,
                    "module {}: executable {executable} names kernel `{kernel}`, which is not \
                     linked; linked: ",
                    module.display()
                )?;
                if linked.is_empty() {
                    f.write_str("none (call `Embed::builtin_kernels` or `Embed::kernels`)")
                } else {
                    f.write_str(&linked.join(", "))
                }
            }
            EmbedError::ArenaTooSmall {
                module,
                function,
                needed,
                available,
                whole,
            } => write!(
                f,
                "module {}: function `{function}` needs a {needed}-byte arena; the board gives \
                 {available}{}",
                module.display(),
                match whole {
                    Some(whole) => {
                        format!(" (with patch-based stages; {whole} with every layer whole)")
                    }
                    None => String::new(),
                }
            ),
            EmbedError::Program { module, message } => write!(
                f,
                "module {}: no static program: {message}",
                module.display()
            ),
            EmbedError::Refused {
                module,
                step,
                kernel,
                message,
            } => write!(
                f,
                "module {}: step {step} of the static program, kernel `{kernel}`, is refused: {message}",
                module.display()
            ),
            EmbedError::NoOutDir { module } => write!(
                f,
                "module {}: OUT_DIR is not set; `Embed::write_to_out_dir` and \
                 `Embed::build_rs` run in a build script",
                module.display()
            ),
            EmbedError::Write {
                module,
                file,
                source,
            } => write!(
                f,
                "module {}: cannot write {}: {source}",
                module.display(),
                file.display()
            ),
        }
    }
}

impl std::error::Error for EmbedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EmbedError::Read { source, .. } | EmbedError::Write { source, .. } => Some(source),
            EmbedError::Invalid { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// How the generated source holds the module's bytes.
#[derive(Clone, Copy)]
enum Bytes<'p> {
    /// An array literal: the source stands alone.
    Literal,
    /// `include_bytes!` of this absolute path.
    Include(&'p str),
}

impl Embed {
    /// Embeds the module file at `module_path` (relative paths are relative to the current
    /// directory: in a build script, the package's root). Set the arena with
    /// [`Embed::arena_bytes`] and the linked kernels before generating.
    pub fn new(module_path: impl AsRef<Path>) -> Self {
        Self {
            module_path: module_path.as_ref().to_path_buf(),
            arena_bytes: None,
            linked: BTreeMap::new(),
            target: None,
            program: false,
            patches: program::Patches::Off,
            announce: false,
        }
    }

    /// The Rust target triple a `.tflite` model is lowered for
    /// ([`ember_import::LowerOptions::for_target`]: on `thumbv7em-*`, int8 convolution
    /// filters stay OHWI for the Cortex-M DSP kernels; on bare-metal `*-none-*` targets no
    /// barriers between steps, which only the local driver runs). Without it, the `TARGET` variable
    /// Cargo sets for build scripts decides, and outside a build script the host's layout
    /// is used. Module files are embedded as they are either way.
    pub fn target(mut self, triple: &str) -> Self {
        self.target = Some(triple.to_owned());
        self
    }

    /// Also emits the module's first function as a static program
    /// (`hal_local::program`): `PROGRAM` (its steps), `PROGRAM_ARENA_BYTES` (the one arena
    /// that holds every value, inputs and outputs included), `PROGRAM_INPUTS` and
    /// `PROGRAM_OUTPUTS` (their spans of the arena) and `POOL` (the constant pool). The
    /// program's arena must fit [`Embed::arena_bytes`]; where every kernel is hal-local's,
    /// the program runs once at build time so a dispatch a kernel refuses fails the build.
    pub fn program(mut self) -> Self {
        self.program = true;
        self
    }

    /// Plans the static program with the patch-based stages that lower its arena most
    /// ([`program::Patches::Smallest`], [`patch`]) even where it fits without them. Without
    /// this call they are used only where the program would not fit
    /// [`Embed::arena_bytes`] otherwise. A build script prints each stage chosen, with
    /// what it costs, as a Cargo warning.
    pub fn patches(mut self) -> Self {
        self.patches = program::Patches::Smallest;
        self
    }

    /// The board's arena in bytes (what it gives `LocalConfig::transient_bytes`): every
    /// function's memory plan must fit; with [`Embed::program`], the static program's one
    /// arena must (its inputs and outputs inside). Required.
    pub fn arena_bytes(mut self, n: u64) -> Self {
        self.arena_bytes = Some(n);
        self
    }

    /// Links kernels: `(name, path)` pairs, where `path` is a Rust path, from the crate that
    /// includes the generated source, of a `const` [`hal_local::kernel::Kernel`] named
    /// `name` (`crate::kernels::CONV2D_F32`). A name given again replaces the earlier path,
    /// built-ins included.
    pub fn kernels(mut self, linked: &[(&str, &str)]) -> Self {
        for (name, path) in linked {
            self.linked.insert((*name).to_owned(), (*path).to_owned());
        }
        self
    }

    /// Links hal-local's kernels of the TFLite op set ([`hal_local::kernels::TFLITE`]), for
    /// an imported model, at the paths hal-local lists for them
    /// ([`hal_local::kernels::TFLITE_PATHS`]).
    pub fn tflite_kernels(mut self) -> Self {
        for kernel in hal_local::kernels::TFLITE_PATHS {
            self.linked
                .insert(kernel.name.to_owned(), kernel.path.to_owned());
        }
        self
    }

    /// Links hal-local's built-in kernels ([`hal_local::kernels::BUILTIN`]) at the paths it
    /// lists for them ([`hal_local::kernels::BUILTIN_PATHS`]), replacing paths given
    /// earlier for those names.
    pub fn builtin_kernels(mut self) -> Self {
        for kernel in hal_local::kernels::BUILTIN_PATHS {
            self.linked
                .insert(kernel.name.to_owned(), kernel.path.to_owned());
        }
        self
    }

    /// Checks the module and returns the Rust source, with the module's bytes as an array
    /// literal so the source stands alone ([`Embed::write_to_out_dir`] includes them from a
    /// file instead, which compiles faster for large modules).
    pub fn generate(&self) -> Result<String, EmbedError> {
        let bytes = self.read()?;
        let (checked, program) = self.check(&bytes)?;
        Ok(self.render(&checked, program.as_ref(), &bytes, Bytes::Literal))
    }

    /// Checks the module and writes the Rust source to `dir/file_name`, and a copy of the
    /// module to `dir/file_name.bin` that the source includes by absolute path (files whose
    /// contents are unchanged are left alone). Returns the source's path.
    pub fn write_to(&self, dir: impl AsRef<Path>, file_name: &str) -> Result<PathBuf, EmbedError> {
        let bytes = self.read()?;
        let (checked, program) = self.check(&bytes)?;
        let program = program.as_ref();
        let dir = dir.as_ref();
        let source_path = dir.join(file_name);
        let copy_path = dir.join(format!("{file_name}.bin"));
        let absolute = std::path::absolute(&copy_path).unwrap_or_else(|_| copy_path.clone());
        let source = match absolute.to_str() {
            Some(path) => {
                self.write_file(&copy_path, &bytes)?;
                if program.is_some() {
                    // The program's pool alone, so firmware that runs it links no header.
                    self.write_file(Path::new(&format!("{path}.pool")), checked.pool())?;
                }
                self.render(&checked, program, &bytes, Bytes::Include(path))
            }
            // `include_bytes!` takes a string literal; fall back to an array literal.
            None => self.render(&checked, program, &bytes, Bytes::Literal),
        };
        self.write_file(&source_path, source.as_bytes())?;
        Ok(source_path)
    }

    /// [`Embed::write_to`] `OUT_DIR`, for a build script: also tells Cargo to rerun the build
    /// script when the module file changes (`cargo:rerun-if-changed`). Include the result
    /// with `include!(concat!(env!("OUT_DIR"), "/<file_name>"))`.
    pub fn write_to_out_dir(&self, file_name: &str) -> Result<PathBuf, EmbedError> {
        println!("cargo:rerun-if-changed={}", self.module_path.display());
        let out_dir = std::env::var_os("OUT_DIR").ok_or_else(|| EmbedError::NoOutDir {
            module: self.module_path.clone(),
        })?;
        self.write_to(PathBuf::from(out_dir), file_name)
    }

    /// [`Embed::write_to_out_dir`] for `main` of a build script: on error, prints it to
    /// stderr (`error: module …`) and exits with status 1, which fails the build with the
    /// message.
    pub fn build_rs(self, file_name: &str) {
        let embed = Embed {
            announce: true,
            ..self
        };
        if let Err(e) = embed.write_to_out_dir(file_name) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }

    fn module(&self) -> PathBuf {
        self.module_path.clone()
    }

    /// The module's bytes: the file itself, or a `.tflite` model imported and lowered.
    fn read(&self) -> Result<Vec<u8>, EmbedError> {
        let bytes = std::fs::read(&self.module_path).map_err(|source| EmbedError::Read {
            module: self.module(),
            source,
        })?;
        if self.module_path.extension().is_none_or(|e| e != "tflite") {
            return Ok(bytes);
        }
        let import = |message: String| EmbedError::Import {
            module: self.module(),
            message,
        };
        let graph = ember_import::parse(&bytes).map_err(|e| import(e.to_string()))?;
        let name = self
            .module_path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("model");
        let options = ember_import::LowerOptions::for_target(&self.target_triple());
        let lowered =
            ember_import::lower_with(&graph, name, options).map_err(|e| import(e.to_string()))?;
        Ok(lowered.built.bytes)
    }

    /// The target the module is built for: [`Embed::target`], Cargo's `TARGET`, or empty.
    fn target_triple(&self) -> String {
        self.target
            .clone()
            .or_else(|| std::env::var("TARGET").ok())
            .unwrap_or_default()
    }

    /// Whether the path linked for kernel `name` is hal-local's own kernel of that name (of
    /// its TFLite op set or its built-ins).
    fn links_hal_local(&self, name: &str) -> bool {
        let paths = hal_local::kernels::TFLITE_PATHS
            .iter()
            .chain(hal_local::kernels::BUILTIN_PATHS);
        paths
            .filter(|k| k.name == name)
            .any(|k| self.linked.get(name).is_some_and(|p| *p == k.path))
    }

    /// The path `KERNELS` names for executable `index`, kernel `kernel`: the linked one,
    /// or — for a static program on a core with tuned kernels
    /// ([`TunedVariant::for_target`](hal_local::kernels::tflite::TunedVariant::for_target)),
    /// where every dispatch of it (the program's and the module's) is one the core's tuned
    /// kernel takes, its parameters and, for the program's, its multipliers in the pool —
    /// hal-local's tuned kernel alone, so the portable loops are not linked.
    fn kernel_path(
        &self,
        module: &Module<'_>,
        program: Option<&program::ProgramPlan>,
        index: usize,
        kernel: &str,
    ) -> String {
        let linked = self.linked.get(kernel).cloned().unwrap_or_default();
        let own = self.links_hal_local(kernel);
        let tuned = hal_local::kernels::tflite::TUNED_PATHS
            .iter()
            .find(|k| k.name == kernel);
        let (Some(program), true, Some(tuned)) = (program, own, tuned) else {
            return linked;
        };
        let Some(variant) = TunedVariant::for_target(&self.target_triple()) else {
            return linked;
        };
        let takes = |executable: usize, constants: &[u32]| {
            executable != index
                || hal_local::kernels::tflite::tuned_takes(variant, kernel, constants)
        };
        // The tuned output stage's own condition, on the multipliers (binding 3) in the pool.
        let stage_takes = |executable: usize, bindings: &[hal_local::program::Span]| {
            let multipliers = bindings
                .get(3)
                .filter(|span| matches!(span.place, hal_local::program::Place::Pool));
            executable != index
                || multipliers
                    .and_then(|span| module.pool().get(span.range()))
                    .is_some_and(hal_local::kernels::tflite::tuned_stage_takes)
        };
        let program_takes = program.steps.iter().all(|step| match step {
            program::PlannedStep::Dispatch {
                executable,
                constants,
                bindings,
                ..
            } => {
                let executable = usize::from(*executable);
                takes(executable, constants) && stage_takes(executable, bindings)
            }
            _ => true,
        });
        let module_takes = module.functions().iter().all(|function| {
            function.steps.iter().all(|step| match step {
                hal_core::module::Step::Dispatch {
                    executable,
                    constants,
                    ..
                } => takes(executable as usize, &constants.iter().collect::<Vec<_>>()),
                _ => true,
            })
        });
        if program_takes && module_takes {
            tuned.path.to_owned()
        } else {
            linked
        }
    }

    /// Whether a static program calls kernel `kernel`, linked as `path`, directly
    /// ([`direct`]): one of the kernels that may be, hal-local's own, and on a core with
    /// tuned kernels its tuned kernel alone (the one a direct call runs, refusing what it
    /// does not take).
    fn calls_directly(&self, kernel: &str, path: &str) -> bool {
        if !direct::DIRECT_KERNELS.contains(&kernel) {
            return false;
        }
        let tuned = hal_local::kernels::tflite::TUNED_PATHS
            .iter()
            .any(|k| k.name == kernel && k.path == path);
        if TunedVariant::for_target(&self.target_triple()).is_some() {
            tuned
        } else {
            tuned || self.links_hal_local(kernel)
        }
    }

    fn write_file(&self, file: &Path, contents: &[u8]) -> Result<(), EmbedError> {
        if std::fs::read(file).is_ok_and(|old| old == contents) {
            return Ok(());
        }
        std::fs::write(file, contents).map_err(|source| EmbedError::Write {
            module: self.module(),
            file: file.to_path_buf(),
            source,
        })
    }

    /// Validates the configuration and the module against it.
    fn check<'b>(
        &self,
        bytes: &'b [u8],
    ) -> Result<(Module<'b>, Option<program::ProgramPlan>), EmbedError> {
        let available = self.arena_bytes.ok_or_else(|| EmbedError::NoArena {
            module: self.module(),
        })?;
        for (kernel, path) in &self.linked {
            if !is_rust_path(path) {
                return Err(EmbedError::BadKernelPath {
                    module: self.module(),
                    kernel: kernel.clone(),
                    path: path.clone(),
                });
            }
        }
        let module = Module::parse(bytes).map_err(|error| EmbedError::Invalid {
            module: self.module(),
            error,
        })?;
        if let Err(ModuleError {
            site: Site::Executable(i),
            ..
        }) = module.check_kernels(|name| self.linked.contains_key(name))
        {
            let kernel = module.executables().get(i).map(|e| e.kernel.to_owned());
            return Err(EmbedError::UnknownKernel {
                module: self.module(),
                executable: i,
                kernel: kernel.unwrap_or_default(),
                linked: self.linked.keys().cloned().collect(),
            });
        }
        // A static program's own arena is checked instead (`check_program`).
        if let (
            false,
            Err(ModuleError {
                site: Site::Function(i),
                ..
            }),
        ) = (self.program, module.check_arena(available))
        {
            let function = module.functions().get(i);
            return Err(EmbedError::ArenaTooSmall {
                module: self.module(),
                function: function.map(|f| f.name.to_owned()).unwrap_or_default(),
                needed: function.map_or(0, |f| f.arena_size),
                available,
                whole: None,
            });
        }
        let program = if self.program {
            Some(self.check_program(&module, available)?)
        } else {
            None
        };
        Ok((module, program))
    }

    /// Plans the module's first function as a static program, checks its arena against
    /// `available`, and runs it once on the host where every kernel is hal-local's.
    fn check_program(
        &self,
        module: &Module<'_>,
        available: u64,
    ) -> Result<program::ProgramPlan, EmbedError> {
        let plan_with = |patches| {
            program::plan_program_with(module, None, patches).map_err(|e| EmbedError::Program {
                module: self.module(),
                message: e.to_string(),
            })
        };
        let mut plan = plan_with(self.patches)?;
        if plan.arena_bytes > available && self.patches == program::Patches::Off {
            plan = plan_with(program::Patches::Smallest)?;
        }
        if self.announce {
            for stage in &plan.patches {
                println!(
                    "cargo:warning=module {}: {stage}",
                    self.module_path.display()
                );
            }
        }
        if plan.arena_bytes > available {
            return Err(EmbedError::ArenaTooSmall {
                module: self.module(),
                function: plan.function.clone(),
                needed: plan.arena_bytes,
                available,
                whole: plan.patches.first().map(|stage| stage.plain_arena_bytes),
            });
        }
        // hal-local's own kernel for each executable, where the linked path is hal-local's.
        let own = |name: &str| {
            self.links_hal_local(name)
                .then(|| program::local_kernel(name))
                .flatten()
        };
        let kernels: Option<Vec<_>> = plan.kernels.iter().map(|name| own(name)).collect();
        if let Some(kernels) = kernels {
            if let Err(error) = plan.run_direct(&kernels, module.pool(), &[]) {
                let (step, message) = match error {
                    hal_local::program::ProgramError::Kernel { step, error } => {
                        (step, error.to_string())
                    }
                    hal_local::program::ProgramError::Malformed { step } => {
                        (step, error.to_string())
                    }
                    other => (0, other.to_string()),
                };
                let kernel = match plan.steps.get(step as usize) {
                    Some(program::PlannedStep::Dispatch { executable, .. }) => {
                        plan.kernels[usize::from(*executable)].clone()
                    }
                    _ => "(a copy or fill)".to_owned(),
                };
                return Err(EmbedError::Refused {
                    module: self.module(),
                    step,
                    kernel,
                    message,
                });
            }
        }
        Ok(plan)
    }

    fn render(
        &self,
        module: &Module<'_>,
        program: Option<&program::ProgramPlan>,
        bytes: &[u8],
        held: Bytes<'_>,
    ) -> String {
        let header = module.header();
        let name = header.name;
        let mut out = String::new();
        let mut line = |s: &str| {
            out.push_str(s);
            out.push('\n');
        };
        line(&format!(
            "// Generated by ember-build from {:?}: do not edit.",
            self.module_path.display().to_string()
        ));
        line("// Include it in a module of its own: its item names are fixed.");
        line("");
        line(&format!(
            "/// The file of module `{name}`, aligned to 64 bytes so its constant pool is too."
        ));
        line("#[repr(C, align(64))]");
        line(&format!(
            "pub struct ModuleBytes(pub [u8; {}]);",
            bytes.len()
        ));
        line("");
        line(&format!(
            "/// The file of module `{name}`, as built into the program."
        ));
        match held {
            Bytes::Literal => line(&format!(
                "pub static MODULE_BYTES: ModuleBytes = ModuleBytes({});",
                array_literal(bytes)
            )),
            Bytes::Include(path) => line(&format!(
                "pub static MODULE_BYTES: ModuleBytes = ModuleBytes(*include_bytes!({path:?}));"
            )),
        }
        line("");
        line(&format!("/// The name of module `{name}`."));
        line(&format!("pub const MODULE_NAME: &str = {name:?};"));
        line("");
        let sizes = module.sizes();
        line(&format!(
            "/// The largest arena a function of module `{name}` needs, in bytes (checked at build"
        ));
        line(&format!(
            "/// time against the board's {}).",
            self.arena_bytes.unwrap_or_default()
        ));
        line(&format!(
            "pub const ARENA_BYTES: u64 = {};",
            sizes.max_arena
        ));
        line("");
        line("/// Bytes `start..start + len` of `bytes`, in a constant expression.");
        line("const fn ember_range(bytes: &'static [u8], start: usize, len: usize) -> &'static [u8] {");
        line("    bytes.split_at(start).1.split_at(len).0");
        line("}");
        line("");
        line(&format!(
            "/// Module `{name}`, decoded and validated at build time: nothing is parsed at start-up."
        ));
        line("pub static MODULE: ::hal_core::module::Module<'static> =");
        line("    ::hal_core::module::Module::prevalidated(");
        line("        ::hal_core::module::Header {");
        line(&format!("            name: {name:?},"));
        line(&format!("            pool_len: {},", header.pool_len));
        line(&format!(
            "            executables: {},",
            seq(&header.executables, bytes)
        ));
        line(&format!(
            "            constants: {},",
            seq(&header.constants, bytes)
        ));
        line(&format!(
            "            functions: {},",
            seq(&header.functions, bytes)
        ));
        line("        },");
        line(&format!("        {},", sizes.header));
        line(&format!(
            "        ember_range(&MODULE_BYTES.0, {}, {}),",
            pool_offset(sizes.header),
            sizes.pool
        ));
        line("    );");
        line("");
        let executables: Vec<(String, String)> = module
            .executables()
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let path = self.kernel_path(module, program, i, e.kernel);
                (e.kernel.to_owned(), path)
            })
            .collect();
        line(&format!(
            "/// The kernels module `{name}`'s executables name, one per executable in their order:"
        ));
        line("/// the table for `hal_local::LocalConfig::kernels` (`&KERNELS`).");
        line(&format!(
            "pub static KERNELS: [::hal_local::kernel::Kernel; {}] = [",
            executables.len()
        ));
        for (i, (kernel, path)) in executables.iter().enumerate() {
            line(&format!("    {path}, // executable {i}: {kernel:?}"));
        }
        line("];");
        line("");
        let mut checked: Vec<&(String, String)> = executables.iter().collect();
        checked.sort();
        checked.dedup();
        if !checked.is_empty() {
            line("// Each path names the kernel the module names for it, checked at compile time.");
            line("const _: () = {");
            line("    const fn same_name(a: &str, b: &str) -> bool {");
            line("        let (a, b) = (a.as_bytes(), b.as_bytes());");
            line("        if a.len() != b.len() {");
            line("            return false;");
            line("        }");
            line("        let mut i = 0;");
            line("        while i < a.len() {");
            line("            if a[i] != b[i] {");
            line("                return false;");
            line("            }");
            line("            i += 1;");
            line("        }");
            line("        true");
            line("    }");
            for (kernel, path) in checked {
                let message = format!("ember-build: `{path}` is not the kernel named {kernel:?}")
                    .replace('{', "{{")
                    .replace('}', "}}");
                line(&format!(
                    "    assert!(same_name({path}.name, {kernel:?}), {message:?});"
                ));
            }
            line("};");
        }
        if let Some(program) = program {
            let direct: Vec<Option<&str>> = executables
                .iter()
                .map(|(kernel, path)| self.calls_directly(kernel, path).then_some(kernel.as_str()))
                .collect();
            render_program(&mut out, name, program, module.pool(), held, &direct);
        }
        out
    }
}

/// The static program's items (see [`Embed::program`]).
fn render_program(
    out: &mut String,
    name: &str,
    program: &program::ProgramPlan,
    pool: &[u8],
    held: Bytes<'_>,
    direct: &[Option<&str>],
) {
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    let span = |s: &hal_local::program::Span| match s.place {
        hal_local::program::Place::Arena => format!("S::arena({}, {})", s.offset, s.length),
        hal_local::program::Place::Pool => format!("S::pool({}, {})", s.offset, s.length),
    };
    let spans =
        |list: &[hal_local::program::Span]| list.iter().map(span).collect::<Vec<_>>().join(", ");
    line("");
    line(&format!(
        "/// The constant pool of module `{name}`, 64-byte aligned, for its static program."
    ));
    line("#[repr(C, align(64))]");
    line(&format!("pub struct PoolBytes(pub [u8; {}]);", pool.len()));
    line("");
    line("/// The constant pool, as built into the program.");
    match held {
        Bytes::Literal => line(&format!(
            "pub static POOL: PoolBytes = PoolBytes({});",
            array_literal(pool)
        )),
        Bytes::Include(path) => line(&format!(
            "pub static POOL: PoolBytes = PoolBytes(*include_bytes!({:?}));",
            format!("{path}.pool")
        )),
    }
    line("");
    line(&format!(
        "/// Bytes of the one arena function `{}`'s static program runs over: every input, output",
        program.function
    ));
    line(&format!(
        "/// and intermediate value (their own plan plus separate inputs and outputs: {} bytes).",
        program.separate_bytes
    ));
    line(&format!(
        "pub const PROGRAM_ARENA_BYTES: usize = {};",
        program.arena_bytes
    ));
    line("");
    line("/// Each input's span of the arena, in the function's order.");
    line(&format!(
        "pub const PROGRAM_INPUTS: [::hal_local::program::Span; {}] = {{ use ::hal_local::program::Span as S; [{}] }};",
        program.inputs.len(),
        spans(&program.inputs)
    ));
    line("/// Each output's span of the arena.");
    line(&format!(
        "pub const PROGRAM_OUTPUTS: [::hal_local::program::Span; {}] = {{ use ::hal_local::program::Span as S; [{}] }};",
        program.outputs.len(),
        spans(&program.outputs)
    ));
    line("");
    line(&format!(
        "/// Function `{}` as a static program: run it with `hal_local::program::run(&PROGRAM, &PROGRAM_KERNELS, arena, &POOL.0)`.",
        program.function
    ));
    for stage in &program.patches {
        line(&format!("///\n/// A {stage}."));
    }
    // Dispatches called directly, each a typed static the program's step points to.
    let direct::Rendered { items, calls } = direct::render(program, direct, span);
    if !items.is_empty() {
        line(items.trim_end());
    }
    if !calls.is_empty() {
        line("");
    }
    // The program's kernel table: the module's, less the executables it only calls
    // directly, so the firmware links no table entry for them.
    let dispatched = |executable: usize| {
        program.steps.iter().enumerate().any(|(index, step)| {
            matches!(step, program::PlannedStep::Dispatch { executable: e, .. }
                if usize::from(*e) == executable && !calls.iter().any(|c| c.0 == index))
        })
    };
    line("/// The kernel table `PROGRAM` runs with: `KERNELS`, each executable the program only");
    line("/// calls directly in its steps replaced by one that refuses any dispatch.");
    line(&format!(
        "pub static PROGRAM_KERNELS: [::hal_local::kernel::Kernel; {}] = [",
        direct.len()
    ));
    for (executable, called) in direct.iter().enumerate() {
        if called.is_some() && !dispatched(executable) {
            line("    ::hal_local::direct::CALLED_DIRECTLY,");
        } else {
            line(&format!("    KERNELS[{executable}],"));
        }
    }
    line("];");
    line("");
    line(&format!(
        "pub static PROGRAM: [::hal_local::program::Step<'static>; {}] = {{",
        program.steps.len()
    ));
    line("    #[allow(unused_imports)]");
    line("    use ::hal_local::program::{Span as S, Step};");
    line("    [");
    for (index, step) in program.steps.iter().enumerate() {
        if let Some((_, held)) = calls.iter().find(|c| c.0 == index) {
            line(&format!("        Step::Call(&CALL_{held}),"));
            continue;
        }
        match step {
            program::PlannedStep::Dispatch {
                executable,
                workgroups,
                constants,
                bindings,
                scratch,
            } => line(&format!(
                "        Step::Dispatch {{ executable: {executable}, workgroups: {workgroups:?}, constants: &{constants:?}, bindings: &[{}], scratch: {} }},",
                spans(bindings),
                span(scratch)
            )),
            program::PlannedStep::Copy { source, target } => line(&format!(
                "        Step::Copy {{ source: {}, target: {} }},",
                span(source),
                span(target)
            )),
            program::PlannedStep::Fill { target, pattern } => line(&format!(
                "        Step::Fill {{ target: {}, pattern: {pattern} }},",
                span(target)
            )),
        }
    }
    line("    ]");
    line("};");
    line("");
    let only_calls = calls.len() == program.steps.len();
    line(
        "/// Every step of `PROGRAM` where each is a direct call (empty otherwise): run them with",
    );
    line("/// `hal_local::direct::run(&PROGRAM_CALLS, arena, &POOL.0)`, which links no dispatch code.");
    line(&format!(
        "pub static PROGRAM_CALLS: [&'static dyn ::hal_local::direct::Call; {}] = [{}];",
        if only_calls { calls.len() } else { 0 },
        if only_calls {
            calls
                .iter()
                .map(|(_, held)| format!("&CALL_{held}"))
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            String::new()
        }
    ));
}

/// `Seq::from_encoded` over the part of `bytes` that holds `seq` (a literal if, somehow, it
/// is not a part of `bytes`).
fn seq<T>(seq: &Seq<'_, T>, bytes: &[u8]) -> String {
    let encoded = seq.encoded();
    let place = if encoded.is_empty() {
        "&[]".to_owned()
    } else {
        let start = (encoded.as_ptr() as usize).wrapping_sub(bytes.as_ptr() as usize);
        let inside = start
            .checked_add(encoded.len())
            .and_then(|end| bytes.get(start..end))
            .is_some_and(|part| std::ptr::eq(part, encoded));
        if inside && start >= PREAMBLE_BYTES {
            format!("ember_range(&MODULE_BYTES.0, {start}, {})", encoded.len())
        } else {
            format!("&{}", array_literal(encoded))
        }
    };
    format!(
        "::hal_core::module::Seq::from_encoded({}, {place})",
        seq.len()
    )
}

/// `[0x.., …]`, sixteen bytes a line.
fn array_literal(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 6 + 8);
    out.push('[');
    for (i, b) in bytes.iter().enumerate() {
        if i % 16 == 0 {
            out.push_str("\n    ");
        } else {
            out.push(' ');
        }
        let _ = write!(out, "0x{b:02x},");
    }
    out.push_str("\n]");
    out
}

/// `a::b::C`, `::a::C`, `crate::C`: identifiers joined by `::`, an optional leading `::`.
fn is_rust_path(path: &str) -> bool {
    let path = path.strip_prefix("::").unwrap_or(path);
    !path.is_empty()
        && path.split("::").all(|segment| {
            let mut chars = segment.chars();
            matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
                && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
                && segment != "_"
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_paths() {
        for ok in [
            "A",
            "::hal_local::kernels::ADD_F32",
            "crate::k::CONV_2D",
            "_x::Y",
        ] {
            assert!(is_rust_path(ok), "{ok}");
        }
        for bad in [
            "", "::", "a::", "a::::b", "1a", "a b", "a::_", "a-b", "a::<T>", "a;b",
        ] {
            assert!(!is_rust_path(bad), "{bad}");
        }
    }

    #[test]
    fn array_literal_lines() {
        let bytes: Vec<u8> = (0..17).collect();
        let text = array_literal(&bytes);
        assert_eq!(text.lines().count(), 4);
        assert!(text.contains("0x0f,\n    0x10,\n]"));
        assert_eq!(array_literal(&[]), "[\n]");
    }
}
