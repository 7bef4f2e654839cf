//! Kernels compiled by Cranelift into relocatable ELF objects: an entry point's kernels as
//! native code for the runtime's disk cache ([`native`]: position-dependent code, as the JIT
//! makes, which the runtime's own loader maps), and a whole library's kernels with the image
//! record of an ahead-of-time object ([`image_object`]: position-independent code, linked into
//! a C program with the runtime).
//!
//! Invariants: kernels are named by their [`KernelInfo`] names (prefixed by the library's name
//! in ahead-of-time objects) and import only the runtime's helpers `ogham_*` and the C library
//! functions Cranelift calls; the image record follows the layout of
//! [`ogham_ir::artifact::cpu`] (`IMAGE_*_AT`), which the runtime's `Image` type checks.

use super::{ClifModule, CompiledSeg, machine};
use cranelift_module::{DataDescription, DataId, Linkage, Module};
use cranelift_object::{ObjectBuilder, ObjectModule};
use ogham_ir::artifact::cpu::{
    IMAGE_BUILD_AT, IMAGE_COUNT_AT, IMAGE_FEATURES_AT, IMAGE_KERNELS_AT, IMAGE_LIBRARY_AT,
    IMAGE_LIBRARY_LEN_AT, IMAGE_SIZE, IMAGE_VERSION_AT, KernelInfo, MakeImage, NativeCode,
};

/// The descriptions of the kernels of `segs` that were generated, in order.
fn infos(segs: &[CompiledSeg]) -> Vec<Option<KernelInfo>> {
    segs.iter()
        .map(|seg| seg.kernel.as_ref().ok().map(super::Kernel::info))
        .collect()
}

/// The kernels of `clif` (usually one entry point's) as native code for this machine.
pub fn native(clif: &ClifModule) -> Result<NativeCode, String> {
    let segs = &clif.segs;
    let isa = machine::isa(false)?;
    let builder = ObjectBuilder::new(isa, "ogham", cranelift_module::default_libcall_names())
        .map_err(|e| format!("object file: {e}"))?;
    let mut module = ObjectModule::new(builder);
    machine::define_kernels(&mut module, segs, "")?;
    let object = module
        .finish()
        .emit()
        .map_err(|e| format!("object file: {e}"))?;
    Ok(NativeCode {
        object,
        kernels: infos(segs),
    })
}

/// An ELF object defining `<name>_image`, the image record of a library whose kernels are
/// `clif` (all of its program's kernel statements, in order), compiled for this machine's CPU;
/// `image` gives the record's other values from the descriptions of those kernels.
/// `name` is a C identifier (the caller checks).
pub fn image_object(
    clif: &ClifModule,
    name: &str,
    image: &mut MakeImage,
) -> Result<Vec<u8>, String> {
    let segs = &clif.segs;
    let data = image(&infos(segs))?;
    let isa = machine::isa(true)?;
    let mut features = machine::cpu_features(&*isa).join(",").into_bytes();
    features.push(0);
    let builder = ObjectBuilder::new(isa, name, cranelift_module::default_libcall_names())
        .map_err(|e| format!("object file: {e}"))?;
    let mut module = ObjectModule::new(builder);
    let (ids, _) = machine::define_kernels(&mut module, segs, &format!("{name}_"))?;

    let library = bytes_data(&mut module, &format!("{name}_library"), &data.library)?;
    let features = bytes_data(&mut module, &format!("{name}_cpu_features"), &features)?;

    let table = declare(&mut module, &format!("{name}_kernels"), Linkage::Local)?;
    let mut desc = DataDescription::new();
    desc.define(vec![0u8; 16 * ids.len().max(1)].into_boxed_slice());
    for (i, kernel) in ids.iter().enumerate() {
        let Some((main, combine)) = *kernel else {
            continue;
        };
        for (slot, id) in [(0, Some(main)), (1, combine)] {
            if let Some(id) = id {
                let func = module.declare_func_in_data(id, &mut desc);
                desc.write_function_addr((16 * i + 8 * slot) as u32, func);
            }
        }
    }
    define(&mut module, table, &desc)?;

    let record = declare(&mut module, &format!("{name}_image"), Linkage::Export)?;
    let mut bytes = vec![0u8; IMAGE_SIZE];
    for (at, value) in [
        (IMAGE_VERSION_AT, data.version),
        (IMAGE_BUILD_AT, data.build),
        (IMAGE_LIBRARY_LEN_AT, library.1 as u64),
        (IMAGE_COUNT_AT, ids.len() as u64),
    ] {
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }
    let mut desc = DataDescription::new();
    desc.define(bytes.into_boxed_slice());
    desc.set_align(8);
    for (at, data) in [
        (IMAGE_LIBRARY_AT, library.0),
        (IMAGE_FEATURES_AT, features.0),
        (IMAGE_KERNELS_AT, table),
    ] {
        let target = module.declare_data_in_data(data, &mut desc);
        desc.write_data_addr(at as u32, target, 0);
    }
    define(&mut module, record, &desc)?;
    module
        .finish()
        .emit()
        .map_err(|e| format!("object file: {e}"))
}

fn declare(module: &mut ObjectModule, name: &str, linkage: Linkage) -> Result<DataId, String> {
    module
        .declare_data(name, linkage, false, false)
        .map_err(|e| format!("declaring {name}: {e}"))
}

fn define(module: &mut ObjectModule, id: DataId, desc: &DataDescription) -> Result<(), String> {
    module
        .define_data(id, desc)
        .map_err(|e| format!("object file: {e}"))
}

/// A local read-only data object holding `bytes`; its id and length.
fn bytes_data(
    module: &mut ObjectModule,
    name: &str,
    bytes: &[u8],
) -> Result<(DataId, usize), String> {
    let id = declare(module, name, Linkage::Local)?;
    let mut desc = DataDescription::new();
    desc.define(bytes.to_vec().into_boxed_slice());
    define(module, id, &desc)?;
    Ok((id, bytes.len()))
}
