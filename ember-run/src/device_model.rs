//! A lowered model on any [`Device`]: the steps of one inference (write the inputs, invoke,
//! read the outputs) over a [`Session`]. [`LocalModel`](crate::LocalModel) runs it on a
//! fresh local device; the Vulkan driver's model tests and benchmark on theirs.

use ember_import::{Lowered, TensorInfo, FUNCTION};
use hal_core::memory::BufferParams;
use hal_core::module::Module;
use hal_core::session::{LoadOptions, ResultMemory, Session};
use hal_core::{BufferSpan, Device, QueueAffinity, SemaphoreValue};

/// The session: executables, constants, memoized command buffers.
type ModelSession = Session<'static, 64, 448, 2>;

fn err(what: &'static str) -> impl Fn(hal_core::Error) -> String {
    move |e| format!("{what}: {e}")
}

/// A lowered model loaded on a device, its argument and result buffers allocated. The
/// module's bytes are leaked (for the program's life: constants may be imported in place).
pub struct DeviceModel {
    session: ModelSession,
    function: u32,
    inputs: Vec<usize>,
    arguments: Vec<BufferSpan>,
    results: Vec<BufferSpan>,
    outputs: Vec<Vec<u8>>,
}

impl DeviceModel {
    /// Loads `lowered` on `device`; inputs go in buffers of `input_params`, results in
    /// `result_memory`.
    pub fn new<D: Device>(
        device: &mut D,
        lowered: &Lowered,
        input_params: BufferParams,
        result_memory: ResultMemory,
    ) -> Result<Self, String>
    where
        D::HostMemory: From<&'static [u8]>,
    {
        // 64-byte-aligned memory for the program's life, as firmware keeps a module in flash.
        let bytes = &lowered.built.bytes;
        // (`[u8; 64]` elements would be aligned to 1 byte only: the start is found instead, so
        // the session imports the constant pool in place rather than copying each constant.)
        let backing: &'static mut [u8] = Box::leak(vec![0u8; bytes.len() + 63].into_boxed_slice());
        let start = backing.as_ptr().align_offset(64);
        let flat = &mut backing[start..start + bytes.len()];
        flat.copy_from_slice(bytes);
        let module_bytes: &'static [u8] = flat;
        let module = Module::parse(module_bytes).map_err(|e| e.to_string())?;
        let session = ModelSession::load(device, module, LoadOptions::default())
            .map_err(|e| format!("load: {e}"))?;
        let Some(function) = session.function(FUNCTION) else {
            let _ = session.release(device);
            return Err("the module has no `main` function".into());
        };
        let mut model = Self {
            session,
            function,
            inputs: lowered.inputs.iter().map(TensorInfo::byte_size).collect(),
            arguments: Vec::new(),
            results: Vec::new(),
            outputs: lowered
                .outputs
                .iter()
                .map(|t| vec![0u8; t.byte_size()])
                .collect(),
        };
        match model.allocate(device, lowered, input_params, result_memory) {
            Ok(()) => Ok(model),
            Err(e) => {
                // Nothing is left on a device that lives on.
                let _ = model.release(device);
                Err(e)
            }
        }
    }

    /// The argument and result buffers.
    fn allocate<D: Device>(
        &mut self,
        device: &mut D,
        lowered: &Lowered,
        input_params: BufferParams,
        result_memory: ResultMemory,
    ) -> Result<(), String> {
        for info in &lowered.inputs {
            let size = (info.byte_size() as u64).max(1);
            let buffer = device
                .allocate_buffer(input_params, size)
                .map_err(err("input buffer"))?;
            self.arguments.push(BufferSpan::whole(buffer));
        }
        let results = self
            .session
            .allocate_results(device, self.function, result_memory)
            .map_err(err("result buffers"))?;
        self.results = results.iter().map(|b| BufferSpan::whole(*b)).collect();
        Ok(())
    }

    /// Writes the model's inputs: one per model input, each exactly its size.
    pub fn write_inputs<D: Device>(
        &mut self,
        device: &mut D,
        inputs: &[&[u8]],
    ) -> Result<(), String> {
        if inputs.len() != self.inputs.len()
            || inputs.iter().zip(&self.inputs).any(|(b, &n)| b.len() != n)
        {
            return Err(format!(
                "the model takes inputs of {:?} bytes, {:?} given",
                self.inputs,
                inputs.iter().map(|b| b.len()).collect::<Vec<_>>()
            ));
        }
        for (span, bytes) in self.arguments.iter().zip(inputs) {
            device
                .write_buffer(*span, bytes)
                .map_err(err("write an input"))?;
        }
        Ok(())
    }

    /// One inference on the inputs last written, waited for: `Session::invoke`.
    pub fn invoke<D: Device>(&mut self, device: &mut D) -> Result<(), String> {
        self.session
            .invoke(
                device,
                self.function,
                &self.arguments,
                &self.results,
                QueueAffinity::ANY,
            )
            .map_err(err("invoke"))
    }

    /// One inference submitted and not waited for (`Session::enqueue`): the value to wait
    /// for.
    pub fn enqueue<D: Device>(&mut self, device: &mut D) -> Result<SemaphoreValue, String> {
        self.session
            .enqueue(
                device,
                self.function,
                &self.arguments,
                &self.results,
                QueueAffinity::ANY,
            )
            .map_err(err("enqueue"))
    }

    /// Reads the outputs of the last inference into [`DeviceModel::outputs`].
    pub fn read_outputs<D: Device>(&mut self, device: &mut D) -> Result<(), String> {
        for (span, out) in self.results.iter().zip(&mut self.outputs) {
            device
                .read_buffer(*span, out)
                .map_err(err("read an output"))?;
        }
        Ok(())
    }

    /// Each output's bytes as last read, in order.
    pub fn outputs(&self) -> &[Vec<u8>] {
        &self.outputs
    }

    /// Releases the buffers and the session: all of them, the first error reported.
    pub fn release<D: Device>(self, device: &mut D) -> Result<(), String> {
        let mut first = Ok(());
        for span in self.arguments.iter().chain(&self.results) {
            if let Err(e) = device.release_buffer(span.buffer) {
                first = first.and(Err(format!("release: {e}")));
            }
        }
        let session = self
            .session
            .release(device)
            .map_err(err("release the session"));
        first.and(session)
    }
}
