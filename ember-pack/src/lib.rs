#![doc = include_str!("../README.md")]

mod description;
mod pack;

pub use description::{
    Constant, ConstantData, Description, Dispatch, Executable, Function, Operand, Step, Value,
};
pub use pack::{pack, pack_file, PackError, Packed};
