//! Command buffers: hal-core's validated command list, translated at execution into a
//! `VkCommandBuffer` for the binding table given.
//!
//! Translation first *plans* every command against the table — resolving slots, checking
//! what hal-local checks when it replays (usage and access of slot buffers, ranges, chunk
//! boundaries of dispatch bindings, the built-in kernels' own checks), cutting ranges into
//! per-chunk pieces — so a refused execution records nothing and writes nothing. The plan
//! is then recorded. A reusable command buffer keeps its last recording with the plan it
//! came from; an execution whose plan is the same (same table, same memory) replays it
//! (seed 004) instead of recording again.

use crate::instance::Context;
use crate::objects::VkObject;
use crate::profile::Profiler;
use crate::staging::InternalBuffer;
use crate::types::{
    CommandBufferRec, DispatchStep, Grid, Memo, Piece, Recording, Retired, Step, VulkanDevice,
};
use ash::vk;
use ember_kernels_wgsl::PushConstants;
use hal_core::command::{
    dispatch_constants, dispatch_spans, Command, CommandBufferMode, ConstantScratch, Op,
    Workgroups, BINDINGS_PER_SLOT, MAX_BINDINGS,
};
use hal_core::contract::BindingFacts;
use hal_core::kernel::KernelError;
use hal_core::memory::{BufferUsage, MemoryAccess};
use hal_core::{BufferSpan, CommandBuffer, Error};

/// The kernel and grid of each dispatch of a plan, in order (an indirect grid as zeros).
fn dispatch_labels(steps: &[Step]) -> impl Iterator<Item = (&'static str, [u32; 3])> + '_ {
    steps.iter().filter_map(|s| match s {
        Step::Dispatch(d) => Some((
            d.kernel,
            match d.grid {
                Grid::Direct(size) => size,
                Grid::Indirect(..) => [0; 3],
            },
        )),
        _ => None,
    })
}

fn ranges_overlap(a: u64, b: u64, length: u64) -> bool {
    a < b.saturating_add(length) && b < a.saturating_add(length)
}

impl VulkanDevice<'_> {
    /// Plans every command of a command buffer for `table`.
    fn plan(
        &self,
        command_buffer: CommandBuffer,
        table: &[BufferSpan],
    ) -> Result<(Vec<Step>, Vec<u8>), Error> {
        let cb = self.command_buffers.get(command_buffer)?;
        let mut steps = Vec::new();
        let mut upload = Vec::new();
        for op in cb.list.ops(&cb.slots) {
            match op {
                Op::Barrier => steps.push(Step::Barrier),
                Op::Fill {
                    target,
                    pattern,
                    pattern_len,
                } => {
                    let span = target.resolve_in(
                        table,
                        &*self.buffers,
                        "fill",
                        BufferUsage::TRANSFER_TARGET,
                        MemoryAccess::WRITE,
                    )?;
                    let pattern = &pattern[..pattern_len as usize];
                    self.plan_fill(span, pattern, &mut steps, &mut upload)?;
                }
                Op::Update { target, data } => {
                    let span = target.resolve_in(
                        table,
                        &*self.buffers,
                        "update",
                        BufferUsage::TRANSFER_TARGET,
                        MemoryAccess::WRITE,
                    )?;
                    let base = upload.len() as u64;
                    for piece in data.pieces() {
                        upload.extend_from_slice(piece);
                    }
                    let len = upload.len() as u64 - base;
                    let span = BufferSpan::new(span.buffer, span.offset, len);
                    for p in self.pieces(span, "update", true)? {
                        steps.push(Step::Upload {
                            from: base + p.at,
                            buffer: p.buffer,
                            offset: p.offset,
                            size: p.len,
                        });
                    }
                }
                Op::Copy {
                    source,
                    target,
                    length,
                } => {
                    let source = source.resolve_in(
                        table,
                        &*self.buffers,
                        "copy source",
                        BufferUsage::TRANSFER_SOURCE,
                        MemoryAccess::READ,
                    )?;
                    let target = target.resolve_in(
                        table,
                        &*self.buffers,
                        "copy target",
                        BufferUsage::TRANSFER_TARGET,
                        MemoryAccess::WRITE,
                    )?;
                    self.plan_copy(source, target, length, &mut steps, &mut upload)?;
                }
                Op::Dispatch {
                    executable,
                    workgroups,
                    bindings,
                    constants: (constant_slots, count),
                } => {
                    let step = self.plan_dispatch(
                        executable,
                        workgroups,
                        bindings,
                        constant_slots,
                        count,
                        table,
                    )?;
                    if let Some(step) = step {
                        steps.push(step);
                    }
                }
            }
        }
        Ok((steps, upload))
    }

    /// Fills: 4-byte-aligned middles with `vkCmdFillBuffer`, unaligned edges from the upload
    /// buffer.
    fn plan_fill(
        &self,
        span: BufferSpan,
        pattern: &[u8],
        steps: &mut Vec<Step>,
        upload: &mut Vec<u8>,
    ) -> Result<(), Error> {
        if !matches!(pattern.len(), 1 | 2 | 4) {
            return Err(Error::InvalidArgument(
                "fill pattern must be 1, 2 or 4 bytes",
            ));
        }
        let n = pattern.len() as u64;
        let mask = n - 1;
        if span.offset & mask != 0 || (span.length != hal_core::WHOLE && span.length & mask != 0) {
            return Err(Error::InvalidArgument(
                "fill offset and length must be multiples of the pattern size",
            ));
        }
        let byte = |q: u64| pattern[(q % n) as usize];
        for p in self.pieces(span, "fill", true)? {
            let stage =
                |upload: &mut Vec<u8>, steps: &mut Vec<Step>, off: u64, q: u64, len: u64| {
                    if len == 0 {
                        return;
                    }
                    let from = upload.len() as u64;
                    upload.extend((0..len).map(|k| byte(q + k)));
                    steps.push(Step::Upload {
                        from,
                        buffer: p.buffer,
                        offset: off,
                        size: len,
                    });
                };
            let head = ((4 - p.offset % 4) % 4).min(p.len);
            stage(upload, steps, p.offset, p.at, head);
            let middle = (p.len - head) & !3;
            if middle > 0 {
                let q = p.at + head;
                let word = [byte(q), byte(q + 1), byte(q + 2), byte(q + 3)];
                steps.push(Step::Fill {
                    buffer: p.buffer,
                    offset: p.offset + head,
                    size: middle,
                    data: u32::from_ne_bytes(word),
                });
            }
            let done = head + middle;
            stage(upload, steps, p.offset + done, p.at + done, p.len - done);
        }
        Ok(())
    }

    /// Copies; within one buffer they name block buffers (the validation layer cannot tell
    /// a sparse buffer's disjoint ranges apart), and overlapping ranges copy through the
    /// upload buffer as `memmove` would.
    fn plan_copy(
        &self,
        source: BufferSpan,
        target: BufferSpan,
        length: u64,
        steps: &mut Vec<Step>,
        upload: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let same = source.buffer == target.buffer;
        let from = self.pieces(
            BufferSpan::new(source.buffer, source.offset, length),
            "copy source",
            !same,
        )?;
        let to = self.pieces(
            BufferSpan::new(target.buffer, target.offset, length),
            "copy target",
            !same,
        )?;
        if same && ranges_overlap(source.offset, target.offset, length) {
            if source.offset == target.offset {
                return Ok(());
            }
            let at = upload.len() as u64;
            upload.resize(upload.len() + length as usize, 0);
            let scratch = [Piece {
                buffer: vk::Buffer::null(),
                offset: at,
                host: core::ptr::null_mut(),
                len: length,
                at: 0,
            }];
            join(&from, &scratch, length, steps);
            steps.push(Step::Barrier);
            join(&scratch, &to, length, steps);
            return Ok(());
        }
        join(&from, &to, length, steps);
        Ok(())
    }

    fn plan_dispatch(
        &self,
        executable: hal_core::Executable,
        workgroups: Workgroups,
        refs: &[Command],
        constant_slots: &[Command],
        constant_count: u8,
        table: &[BufferSpan],
    ) -> Result<Option<Step>, Error> {
        let exe = *self.executables.get(executable)?;
        let pipeline = self.pipeline(&exe)?;
        let mut scratch = ConstantScratch::new();
        let constants = dispatch_constants(constant_slots, constant_count, &mut scratch);
        let grid = match workgroups {
            Workgroups::Direct(count) => {
                if count.contains(&0) {
                    return Ok(None);
                }
                let max = self.ctx.limits.max_workgroup_count;
                if count.iter().zip(max).any(|(&c, m)| c > m) {
                    return Err(Error::Limit {
                        what: "workgroups along one dimension",
                        requested: u64::from(*count.iter().max().unwrap_or(&0)),
                        limit: u64::from(max.into_iter().min().unwrap_or(0)),
                    });
                }
                Grid::Direct(count)
            }
            Workgroups::Indirect(params) => {
                let span = params.resolve(table)?;
                let (piece, info) = self.single_piece(
                    BufferSpan::new(span.buffer, span.offset, 12),
                    "indirect dispatch parameters",
                )?;
                info.check_indirect_params()?;
                Grid::Indirect(piece.buffer, piece.offset)
            }
        };
        let mut facts = Vec::with_capacity(refs.len() * BINDINGS_PER_SLOT);
        let mut pieces = Vec::with_capacity(refs.len() * BINDINGS_PER_SLOT);
        for span in dispatch_spans(refs, table) {
            let span = span?;
            let (piece, info) = self.single_piece(span, "dispatch binding")?;
            let writable = info.check_dispatch_binding()?;
            facts.push(BindingFacts {
                offset: span.offset,
                len: piece.len,
                writable,
            });
            pieces.push(piece);
        }
        match exe.kernel {
            // The kernel's check, exactly as the local driver's kernel makes it: a GPU kernel
            // cannot refuse, so a dispatch it would refuse is never recorded.
            Some(kernel) => {
                let used = kernel.check(constants, &facts).map_err(Error::Kernel)?;
                if used > kernel.max_params() {
                    return Err(Error::Limit {
                        what: "parameter words of an op kernel",
                        requested: used as u64,
                        limit: kernel.max_params() as u64,
                    });
                }
            }
            None => {
                if let Some(i) = facts.iter().position(|b| b.offset % 4 != 0) {
                    return Err(Error::Kernel(KernelError::Misaligned {
                        index: i as u32,
                        alignment: 4,
                    }));
                }
            }
        }
        let whole_words = exe.kernel.is_some_and(|k| k.binds_whole_words());
        let align = self.ctx.limits.min_storage_buffer_offset_alignment;
        let dummy = self
            .dummy
            .as_ref()
            .map(|d| (d.buffer, 0, d.size))
            .ok_or(Error::Internal("device torn down"))?;
        let mut descriptors = [dummy; MAX_BINDINGS];
        let mut bases = Vec::with_capacity(pieces.len());
        for (i, p) in pieces.iter().enumerate() {
            if p.len == 0 {
                // The end of the dummy buffer: a kernel that counts a binding's words from
                // its bound range finds none.
                bases.push(u32::try_from(dummy.2).unwrap_or(u32::MAX));
                continue;
            }
            let bind = p.offset - p.offset % align;
            let mut range = p.offset - bind + p.len;
            if whole_words {
                // Op kernels read and write whole words: cover the last one (every buffer's
                // size is a whole number of words).
                range = range.div_ceil(4) * 4;
            }
            if range > self.ctx.limits.max_storage_buffer_range {
                return Err(Error::Limit {
                    what: "storage buffer binding range (maxStorageBufferRange)",
                    requested: range,
                    limit: self.ctx.limits.max_storage_buffer_range,
                });
            }
            descriptors[i] = (p.buffer, bind, range);
            bases.push((p.offset - bind) as u32);
        }
        let (push, grid) = match exe.kernel {
            Some(kernel) => {
                // The op kernels stride over their output words: the grid is theirs.
                let grid = match grid {
                    Grid::Direct(_) if !kernel.runs_on_dispatch_grid() => {
                        let out = kernel.output(facts.len());
                        Grid::Direct(kernel.grid(
                            constants,
                            u64::from(bases.get(out).copied().unwrap_or(0)),
                            facts.get(out).map_or(0, |f| f.len),
                        ))
                    }
                    grid => grid,
                };
                (PushConstants::new(kernel, &bases, constants).words(), grid)
            }
            None => (PushConstants::generic(&bases, constants).words(), grid),
        };
        let kernel = exe.kernel.map_or("spirv", |k| k.name);
        Ok(Some(Step::Dispatch(Box::new(DispatchStep {
            kernel,
            pipeline,
            descriptors,
            push,
            grid,
        }))))
    }

    /// Descriptor sets for every dispatch of a plan, from a new pool (devices without push
    /// descriptors).
    fn descriptor_sets(
        &self,
        steps: &[Step],
    ) -> Result<Option<(vk::DescriptorPool, Vec<vk::DescriptorSet>)>, Error> {
        let dispatches = steps
            .iter()
            .filter(|s| matches!(s, Step::Dispatch(_)))
            .count() as u32;
        if self.ctx.push_descriptor.is_some() || dispatches == 0 {
            return Ok(None);
        }
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: dispatches * MAX_BINDINGS as u32,
        }];
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(dispatches)
            .pool_sizes(&sizes);
        // SAFETY: a valid create info on a live device.
        let pool = unsafe { self.ctx.device.create_descriptor_pool(&info, None) }
            .map_err(crate::instance::vk_error("vkCreateDescriptorPool"))?;
        self.ctx.live.created(VkObject::DescriptorPool);
        let layouts = vec![self.pipelines.set_layout; dispatches as usize];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        // SAFETY: the pool was sized for exactly these sets.
        match unsafe { self.ctx.device.allocate_descriptor_sets(&info) } {
            Ok(sets) => Ok(Some((pool, sets))),
            Err(e) => {
                self.destroy_pool(pool);
                Err(crate::instance::vk_error("vkAllocateDescriptorSets")(e))
            }
        }
    }

    fn destroy_pool(&self, pool: vk::DescriptorPool) {
        destroy_pool(&self.ctx, pool);
    }

    /// Records a plan into `cb` (recording), with `sets` for its dispatches when the device
    /// has no push descriptors, and timestamps where `profiler` is given.
    fn record_plan(
        &self,
        cb: vk::CommandBuffer,
        steps: &[Step],
        upload: vk::Buffer,
        sets: &[vk::DescriptorSet],
        profiler: Option<&Profiler>,
    ) {
        let d = &self.ctx.device;
        if let Some(p) = profiler {
            p.begin(&self.ctx, cb);
        }
        let mut dispatched = 0;
        let mut sets = sets.iter();
        // Indirect dispatches read their grid at the indirect stage: barriers wait for it only
        // in plans that have one. Earlier submissions ended with `end_barrier`, which covers
        // everything else.
        let indirect = steps
            .iter()
            .any(|s| matches!(s, Step::Dispatch(d) if matches!(d.grid, Grid::Indirect(..))));
        if indirect {
            self.ctx.barrier(cb, true);
        }
        for step in steps {
            match *step {
                Step::Barrier => self.ctx.barrier(cb, indirect),
                Step::Fill {
                    buffer,
                    offset,
                    size,
                    data,
                } => {
                    // SAFETY: `cb` is recording; the range lies in a live buffer with
                    // transfer-target usage, offset and size multiples of 4.
                    unsafe { d.cmd_fill_buffer(cb, buffer, offset, size, data) };
                }
                Step::Upload {
                    from,
                    buffer,
                    offset,
                    size,
                } => {
                    let region = vk::BufferCopy::default()
                        .src_offset(from)
                        .dst_offset(offset)
                        .size(size);
                    // SAFETY: both ranges lie in live buffers (the plan sized the upload
                    // buffer); they are different buffers.
                    unsafe { d.cmd_copy_buffer(cb, upload, buffer, &[region]) };
                }
                Step::Copy {
                    src,
                    src_offset,
                    dst,
                    dst_offset,
                    size,
                } => {
                    let region = vk::BufferCopy::default()
                        .src_offset(src_offset)
                        .dst_offset(dst_offset)
                        .size(size);
                    // A null buffer is the upload buffer (scratch of an overlapping copy).
                    let or_upload =
                        |b: vk::Buffer| if b == vk::Buffer::null() { upload } else { b };
                    // SAFETY: both ranges lie in live buffers and do not overlap in memory
                    // (distinct allocations, or checked disjoint ranges of one buffer).
                    unsafe { d.cmd_copy_buffer(cb, or_upload(src), or_upload(dst), &[region]) };
                }
                Step::Dispatch(ref dispatch) => {
                    let DispatchStep {
                        pipeline,
                        ref descriptors,
                        ref push,
                        grid,
                        ..
                    } = **dispatch;
                    let infos: Vec<[vk::DescriptorBufferInfo; 1]> = descriptors
                        .iter()
                        .map(|&(buffer, offset, range)| {
                            [vk::DescriptorBufferInfo {
                                buffer,
                                offset,
                                range,
                            }]
                        })
                        .collect();
                    let set = sets.next().copied().unwrap_or_default();
                    let writes: Vec<vk::WriteDescriptorSet<'_>> = infos
                        .iter()
                        .enumerate()
                        .map(|(i, info)| {
                            vk::WriteDescriptorSet::default()
                                .dst_set(set)
                                .dst_binding(i as u32)
                                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                                .buffer_info(info)
                        })
                        .collect();
                    let mut bytes = [0u8; 128];
                    for (chunk, word) in bytes.chunks_exact_mut(4).zip(push) {
                        chunk.copy_from_slice(&word.to_ne_bytes());
                    }
                    // SAFETY: `cb` is recording; the pipeline and layout are live and
                    // compatible; every descriptor names a live buffer range within
                    // maxStorageBufferRange at an aligned offset; the push range matches the
                    // layout's.
                    unsafe {
                        d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
                        match &self.ctx.push_descriptor {
                            Some(push) => push.cmd_push_descriptor_set(
                                cb,
                                vk::PipelineBindPoint::COMPUTE,
                                self.pipelines.layout,
                                0,
                                &writes,
                            ),
                            None => {
                                // A set of this recording's own pool, used by nothing else.
                                d.update_descriptor_sets(&writes, &[]);
                                d.cmd_bind_descriptor_sets(
                                    cb,
                                    vk::PipelineBindPoint::COMPUTE,
                                    self.pipelines.layout,
                                    0,
                                    &[set],
                                    &[],
                                );
                            }
                        }
                        d.cmd_push_constants(
                            cb,
                            self.pipelines.layout,
                            vk::ShaderStageFlags::COMPUTE,
                            0,
                            &bytes,
                        );
                        match grid {
                            Grid::Direct([x, y, z]) => d.cmd_dispatch(cb, x, y, z),
                            Grid::Indirect(buffer, offset) => {
                                d.cmd_dispatch_indirect(cb, buffer, offset)
                            }
                        }
                    }
                    if let Some(p) = profiler {
                        p.after_dispatch(&self.ctx, cb, dispatched);
                    }
                    dispatched += 1;
                }
            }
        }
        self.ctx.end_barrier(cb);
    }

    /// Runs a command buffer with `table`, without waiting for it: planned (and so checked),
    /// then replayed from its memo or recorded, and submitted.
    pub(crate) fn execute(
        &mut self,
        command_buffer: CommandBuffer,
        table: &[BufferSpan],
    ) -> Result<(), Error> {
        self.collect();
        let generation = self.memo_generation;
        let destroyed = self.objects_destroyed();
        // A reusable command buffer's commands are fixed once ended, and nothing a plan
        // depends on (buffers, their memory, pipelines) changed since the memo was made if
        // the generation is the same: with the same table, the plan (and every check it
        // makes) would come out the same, so the recording replays without planning again.
        let rec = self.command_buffers.get(command_buffer)?;
        if let Some(memo) = rec.memo.as_ref() {
            if rec.list.mode() == CommandBufferMode::Reusable
                && memo.generation == generation
                && memo.table == table
            {
                let cb = memo.recording.cb;
                return self.submit_recorded(command_buffer, cb);
            }
        }
        let (steps, upload) = self.plan(command_buffer, table)?;
        let rec = self.command_buffers.get(command_buffer)?;
        // The host writes the upload buffer below: an earlier submission must be done with it.
        if !upload.is_empty() && !self.ctx.reached(rec.submitted) {
            self.ctx.wait_value(rec.submitted)?;
        }
        let rec = self.command_buffers.get_mut(command_buffer)?;
        let reusable = rec.list.mode() == CommandBufferMode::Reusable;
        // The upload buffer: grown when too small (a kept recording names the old one).
        let too_small = rec
            .upload
            .as_ref()
            .is_none_or(|u| u.size < upload.len() as u64);
        if !upload.is_empty() && too_small {
            let old_upload = rec.upload.take();
            let old_memo = rec.memo.take();
            let type_index = self.memory.pools[0].type_index;
            let fresh = InternalBuffer::new(&self.ctx, upload.len() as u64, type_index);
            if let Some(old) = old_upload {
                self.free_when_done(Retired::Upload(old));
            }
            if let Some(memo) = old_memo {
                self.free_when_done(Retired::Recording(memo.recording));
            }
            self.command_buffers.get_mut(command_buffer)?.upload = Some(fresh?);
        }
        let rec = self.command_buffers.get_mut(command_buffer)?;
        if let Some(u) = rec.upload.as_mut() {
            u.bytes_mut()[..upload.len()].copy_from_slice(&upload);
        }
        let upload_buffer = rec.upload.as_ref().map_or(vk::Buffer::null(), |u| u.buffer);
        if let Some(memo) = rec.memo.as_ref() {
            // A plan that came out the same names the same live objects, unless one was
            // destroyed (and another took its handle) since.
            if memo.objects == destroyed && memo.plan == steps {
                let cb = memo.recording.cb;
                if let Some(memo) = rec.memo.as_mut() {
                    // The next execution with this table replays without planning.
                    memo.table.clear();
                    memo.table.extend_from_slice(table);
                    memo.generation = generation;
                }
                return self.submit_recorded(command_buffer, cb);
            }
        }
        if let Some(memo) = rec.memo.take() {
            self.free_when_done(Retired::Recording(memo.recording));
        }
        let sets = self.descriptor_sets(&steps)?;
        let begun = if reusable {
            self.ctx.begin_reusable()
        } else {
            self.ctx.begin()
        };
        let cb = match begun {
            Ok(cb) => cb,
            Err(e) => {
                if let Some((pool, _)) = sets {
                    self.destroy_pool(pool);
                }
                return Err(e);
            }
        };
        let (pool, sets) = match sets {
            Some((pool, sets)) => (Some(pool), sets),
            None => (None, Vec::new()),
        };
        self.record_plan(cb, &steps, upload_buffer, &sets, self.profiler.as_ref());
        let recording = Recording { cb, pool };
        let result = self.ctx.end(cb).and_then(|()| self.ctx.submit(cb));
        if let (Ok(_), Some(p)) = (&result, self.profiler.as_mut()) {
            p.ran(dispatch_labels(&steps));
        }
        match (result, reusable) {
            (Ok(value), true) => {
                if let Ok(rec) = self.command_buffers.get_mut(command_buffer) {
                    rec.submitted = value;
                    rec.memo = Some(Memo {
                        plan: steps,
                        table: table.to_vec(),
                        generation,
                        objects: destroyed,
                        recording,
                    });
                } else {
                    self.free_when_done(Retired::Recording(recording));
                }
                Ok(())
            }
            (Ok(value), false) => {
                if let Ok(rec) = self.command_buffers.get_mut(command_buffer) {
                    rec.submitted = value;
                }
                self.free_when_done(Retired::Recording(recording));
                Ok(())
            }
            (Err(e), _) => {
                // Never submitted: nothing pending uses it.
                recording.free(&self.ctx);
                Err(e)
            }
        }
    }

    /// Submits a kept recording of `command_buffer` again.
    fn submit_recorded(
        &mut self,
        command_buffer: CommandBuffer,
        cb: vk::CommandBuffer,
    ) -> Result<(), Error> {
        self.memo_hits += 1;
        let value = self.ctx.submit(cb)?;
        let rec = self.command_buffers.get_mut(command_buffer)?;
        rec.submitted = value;
        if let (Some(p), Some(memo)) = (self.profiler.as_mut(), rec.memo.as_ref()) {
            p.ran(dispatch_labels(&memo.plan));
        }
        Ok(())
    }

    /// Frees a command buffer's Vulkan objects (its record is out of the table).
    pub(crate) fn free_command_buffer_rec(&mut self, rec: CommandBufferRec) {
        self.slots_in_use = self.slots_in_use.saturating_sub(rec.slots.len());
        if let Some(memo) = rec.memo {
            self.free_when_done(Retired::Recording(memo.recording));
        }
        if let Some(u) = rec.upload {
            self.free_when_done(Retired::Upload(u));
        }
    }

    /// Forgets every kept recording (an object they name is going away).
    pub(crate) fn drop_memoized(&mut self) {
        let mut cbs = Vec::new();
        for (handle, _) in self.command_buffers.iter() {
            cbs.push(handle);
        }
        for handle in cbs {
            if let Ok(rec) = self.command_buffers.get_mut(handle) {
                if let Some(memo) = rec.memo.take() {
                    self.free_when_done(Retired::Recording(memo.recording));
                }
            }
        }
    }
}

/// Copy regions between two piece lists covering the same `length` bytes.
fn join(from: &[Piece], to: &[Piece], length: u64, steps: &mut Vec<Step>) {
    let (mut i, mut j, mut done) = (0, 0, 0u64);
    while done < length && i < from.len() && j < to.len() {
        let (a, b) = (&from[i], &to[j]);
        let a_left = a.at + a.len - done;
        let b_left = b.at + b.len - done;
        let n = a_left.min(b_left);
        steps.push(Step::Copy {
            src: a.buffer,
            src_offset: a.offset + (done - a.at),
            dst: b.buffer,
            dst_offset: b.offset + (done - b.at),
            size: n,
        });
        done += n;
        if n == a_left {
            i += 1;
        }
        if n == b_left {
            j += 1;
        }
    }
}

fn destroy_pool(ctx: &Context, pool: vk::DescriptorPool) {
    // SAFETY: no pending work uses the pool's sets (a recording is freed only once its last
    // submission has run, or if it was never submitted) and the command buffer recorded with
    // them is freed with it.
    unsafe { ctx.device.destroy_descriptor_pool(pool, None) };
    ctx.live.destroyed(VkObject::DescriptorPool);
}

impl Recording {
    /// Frees its command buffer and its descriptor pool (no submission of it is pending).
    pub(crate) fn free(self, ctx: &Context) {
        ctx.free_command_buffer(self.cb);
        if let Some(pool) = self.pool {
            destroy_pool(ctx, pool);
        }
    }
}
