#![doc = include_str!("../README.md")]

mod device_model;
mod run;

pub use device_model::DeviceModel;
pub use run::{run_local, run_local_cases, LocalModel, Outputs, RunOutput};
