//! The digits model on the device: every held-out image classified through a [`Session`]
//! over the module `build.rs` embedded, each answer checked on the device against its label
//! and against the float64 reference's prediction computed at build time.

use hal_core::memory::{BufferParams, MemoryAccess};
use hal_core::session::{LoadError, LoadOptions, ResultMemory, Session, SessionStats};
use hal_core::{Buffer, BufferSpan, Device, Mapped, QueueAffinity};
use hal_local::alloc::Tlsf;
use hal_local::{HostMemory, LocalDevice, LocalStorage};
use static_cell::ConstStaticCell;

/// The embedded module: `MODULE`, `KERNELS`, `ARENA_BYTES` (see `ember-build`).
#[allow(missing_docs)]
pub mod module {
    include!(concat!(env!("OUT_DIR"), "/digits_module.rs"));
}

/// The held-out images, 64 pixels of one byte (0..=16) each, in split order.
pub static IMAGES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/held_out_images.bin"));
/// Their labels.
pub static LABELS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/held_out_labels.bin"));
/// What the float64 reference predicts for each (computed on the host at build time).
pub static REFERENCE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/held_out_reference.bin"));

/// Pixels per image, classes per answer.
pub const PIXELS: usize = 64;
const CLASSES: usize = 10;
const IMAGE_BYTES: usize = PIXELS * 4;
const ANSWER_BYTES: usize = CLASSES * 4;

/// The device's tables: for one small model (12 objects, 48 command slots, 16 allocator
/// nodes, 2 pending operations), small enough to leave the stack room on a 64 KiB board.
pub type DigitsStorage = LocalStorage<12, 48, 16, 2>;
/// The device.
pub type DigitsDevice = LocalDevice<'static, Tlsf<16>>;
/// The session: 4 executables, 8 constants, 2 memoized command buffers.
pub type DigitsSession = Session<'static, 4, 8, 2>;

/// Why the check could not run.
#[derive(Debug)]
pub enum Problem {
    /// The device refused a call.
    Device(hal_core::Error),
    /// The session did not load.
    Load(LoadError),
    /// Something else, said in words.
    Other(&'static str),
}

/// A failed step and why.
#[derive(Debug)]
pub struct Failure {
    /// What the firmware was doing.
    pub step: &'static str,
    /// Why it failed.
    pub problem: Problem,
}

impl Failure {
    /// Logs the failure.
    pub fn log(&self) {
        match &self.problem {
            Problem::Device(e) => say!("digits: {} failed: {}", self.step, e),
            Problem::Load(e) => say!("digits: {} failed: {}", self.step, e),
            Problem::Other(why) => say!("digits: {} failed: {}", self.step, why),
        }
    }
}

fn device(step: &'static str) -> impl Fn(hal_core::Error) -> Failure {
    move |e| Failure {
        step,
        problem: Problem::Device(e),
    }
}

/// What the check measured.
#[derive(Debug, Clone, Copy)]
pub struct DigitsReport {
    /// Images classified.
    pub images: u32,
    /// Answers equal to the label.
    pub correct: u32,
    /// Answers equal to the float64 reference's.
    pub agree: u32,
    /// Whether the inputs were imported in place from shared memory.
    pub inputs_imported: bool,
    /// Constants imported or streamed, arena, recordings and replays.
    pub session: SessionStats,
    /// `size_of` the device and its storage, and `size_of::<DigitsSession>()`.
    pub table_bytes: (usize, usize),
    /// Peak bytes in use in the device's heap.
    pub heap_peak_bytes: u64,
}

impl DigitsReport {
    /// Logs the figures; `true` if accuracy is at least 95%, agreement with the reference at
    /// least 99.9%, and every constant was imported in place.
    pub fn log_and_judge(&self) -> bool {
        let n = self.images.max(1);
        say!(
            "digits: {} / {} correct ({} %), {} / {} agree with the f64 reference",
            self.correct,
            self.images,
            self.correct as f32 * 100.0 / n as f32,
            self.agree,
            self.images
        );
        let s = self.session;
        say!(
            "digits: constants {} B imported in place, {} B streamed; inputs {}",
            s.imported_bytes,
            s.streamed_bytes,
            if self.inputs_imported {
                "imported in place from shared DRAM (no copy)"
            } else {
                "written into device memory"
            }
        );
        say!(
            "digits: arena peak {} B; command buffer recorded {}x, replayed {}x; tables {} B device + {} B session; device heap peak {} B",
            s.arena_peak,
            s.recorded,
            s.replayed,
            self.table_bytes.0,
            self.table_bytes.1,
            self.heap_peak_bytes
        );
        let accurate = u64::from(self.correct) * 100 >= u64::from(self.images) * 95;
        let agrees = u64::from(self.agree) * 1000 >= u64::from(self.images) * 999;
        let zero_copy = s.streamed_bytes == 0 && s.imported_bytes > 0;
        if !accurate {
            say!("digits: FAIL: accuracy under 95%");
        }
        if !agrees {
            say!("digits: FAIL: agreement with the reference under 99.9%");
        }
        if !zero_copy {
            say!("digits: FAIL: constants were not imported in place");
        }
        self.images > 0 && accurate && agrees && zero_copy
    }
}

/// The first index of the largest of ten little-endian `f32`s.
fn argmax(answer: &[u8]) -> u8 {
    let mut best = (0u8, f32::NEG_INFINITY);
    for (i, word) in answer.chunks_exact(4).enumerate() {
        let p = f32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        if p > best.1 {
            best = (i as u8, p);
        }
    }
    best.0
}

/// `image`'s network input (each pixel divided by 16), as little-endian `f32` bytes.
fn features(image: &[u8], out: &mut [u8]) {
    for (pixel, word) in image.iter().zip(out.chunks_exact_mut(4)) {
        word.copy_from_slice(&(f32::from(*pixel) / 16.0).to_le_bytes());
    }
}

/// Classifies every held-out image on a hal-local device over `memory`. With
/// `shared_inputs` (at least `images × 256` bytes), every input is written there once and the
/// device imports the whole block in place; the answers land in one mappable buffer the CPU
/// reads through a mapping. Otherwise each input is written into device memory in turn.
pub fn check(
    memory: &'static mut [u8],
    shared_inputs: Option<&'static mut [u8]>,
) -> Result<DigitsReport, Failure> {
    static STORAGE: ConstStaticCell<DigitsStorage> = ConstStaticCell::new(DigitsStorage::EMPTY);
    let mut owned = match crate::device::take(&STORAGE, memory, &module::KERNELS) {
        Some(Ok(dev)) => dev,
        Some(Err(e)) => return Err(device("create the device")(e)),
        None => {
            return Err(Failure {
                step: "create the device",
                problem: Problem::Other("the check ran twice"),
            })
        }
    };
    let dev = &mut owned;
    let mut session =
        DigitsSession::load(dev, module::MODULE, LoadOptions::default()).map_err(|e| Failure {
            step: "load the module",
            problem: Problem::Load(e),
        })?;
    let classify = session.function("classify").ok_or(Failure {
        step: "find `classify`",
        problem: Problem::Other("the module has no `classify` function"),
    })?;
    let images = LABELS.len();
    let mut predictions = [0u8; 1024];
    if images > predictions.len() || IMAGES.len() != images * PIXELS || REFERENCE.len() != images {
        return Err(Failure {
            step: "read the embedded data",
            problem: Problem::Other("images, labels and reference disagree in length"),
        });
    }
    let inputs_imported = shared_inputs.is_some();
    match shared_inputs {
        None => classify_copied(dev, &mut session, classify, &mut predictions)?,
        Some(shared) => classify_imported(dev, &mut session, classify, shared, &mut predictions)?,
    }
    let heap_peak_bytes = dev.allocator_stats(0).map_or(0, |s| s.peak_bytes_in_use);
    let stats = session.stats();
    session
        .release(dev)
        .map_err(device("release the session"))?;
    if dev.object_counts() != Default::default() {
        return Err(Failure {
            step: "release everything",
            problem: Problem::Other("objects were left on the device"),
        });
    }
    let mut correct = 0;
    let mut agree = 0;
    for ((p, label), reference) in predictions.iter().zip(LABELS).zip(REFERENCE) {
        correct += u32::from(p == label);
        agree += u32::from(p == reference);
    }
    Ok(DigitsReport {
        images: images as u32,
        correct,
        agree,
        inputs_imported,
        session: stats,
        table_bytes: (
            size_of::<DigitsDevice>() + size_of::<DigitsStorage>(),
            size_of::<DigitsSession>(),
        ),
        heap_peak_bytes,
    })
}

fn results(
    dev: &mut DigitsDevice,
    session: &DigitsSession,
    classify: u32,
) -> Result<Buffer, Failure> {
    let results = session
        .allocate_results(dev, classify, ResultMemory::DeviceLocal)
        .map_err(device("allocate the result"))?;
    results.first().copied().ok_or(Failure {
        step: "allocate the result",
        problem: Problem::Other("`classify` has no result"),
    })
}

/// One image at a time: write it into device memory, invoke, read the answer back.
fn classify_copied(
    dev: &mut DigitsDevice,
    session: &mut DigitsSession,
    classify: u32,
    predictions: &mut [u8],
) -> Result<(), Failure> {
    let image = dev
        .allocate_buffer(BufferParams::device_local(), IMAGE_BYTES as u64)
        .map_err(device("allocate the input"))?;
    let answer = results(dev, session, classify)?;
    let mut input = [0u8; IMAGE_BYTES];
    let mut output = [0u8; ANSWER_BYTES];
    for (pixels, prediction) in IMAGES.chunks_exact(PIXELS).zip(predictions.iter_mut()) {
        features(pixels, &mut input);
        dev.write_buffer(BufferSpan::whole(image), &input)
            .map_err(device("write an image"))?;
        session
            .invoke(
                dev,
                classify,
                &[BufferSpan::whole(image)],
                &[BufferSpan::whole(answer)],
                QueueAffinity::ANY,
            )
            .map_err(device("invoke `classify`"))?;
        dev.read_buffer(BufferSpan::whole(answer), &mut output)
            .map_err(device("read an answer"))?;
        *prediction = argmax(&output);
    }
    dev.release_buffer(image).map_err(device("release"))?;
    dev.release_buffer(answer).map_err(device("release"))?;
    Ok(())
}

/// All images at once, in memory both sides use: the CPU writes every input into `shared`,
/// the device imports it in place (no copy), each invocation binds its image's span of the
/// import and its answer's span of one mappable buffer, and the CPU reads every answer
/// through one mapping.
fn classify_imported(
    dev: &mut DigitsDevice,
    session: &mut DigitsSession,
    classify: u32,
    shared: &'static mut [u8],
    predictions: &mut [u8],
) -> Result<(), Failure> {
    let images = LABELS.len();
    let Some(shared) = shared.get_mut(..images * IMAGE_BYTES) else {
        return Err(Failure {
            step: "write the inputs",
            problem: Problem::Other("the shared region is smaller than the inputs"),
        });
    };
    for (pixels, input) in IMAGES
        .chunks_exact(PIXELS)
        .zip(shared.chunks_exact_mut(IMAGE_BYTES))
    {
        features(pixels, input);
    }
    let inputs = dev
        .import_buffer(HostMemory::ReadOnly(shared), BufferParams::device_local())
        .map_err(device("import the inputs"))?;
    if dev.buffer_info(inputs).map(|i| i.imported) != Ok(true) {
        return Err(Failure {
            step: "import the inputs",
            problem: Problem::Other("the import was a copy"),
        });
    }
    let answers = dev
        .allocate_buffer(BufferParams::host_visible(), (images * ANSWER_BYTES) as u64)
        .map_err(device("allocate the answers"))?;
    for i in 0..images {
        let input = BufferSpan {
            buffer: inputs,
            offset: (i * IMAGE_BYTES) as u64,
            length: IMAGE_BYTES as u64,
        };
        let answer = BufferSpan {
            buffer: answers,
            offset: (i * ANSWER_BYTES) as u64,
            length: ANSWER_BYTES as u64,
        };
        session
            .invoke(dev, classify, &[input], &[answer], QueueAffinity::ANY)
            .map_err(device("invoke `classify`"))?;
    }
    {
        let mapping = dev
            .map(BufferSpan::whole(answers), MemoryAccess::READ)
            .map_err(device("map the answers"))?;
        for (answer, prediction) in mapping
            .bytes()
            .chunks_exact(ANSWER_BYTES)
            .zip(predictions.iter_mut())
        {
            *prediction = argmax(answer);
        }
    }
    dev.release_buffer(inputs).map_err(device("release"))?;
    dev.release_buffer(answers).map_err(device("release"))?;
    Ok(())
}
