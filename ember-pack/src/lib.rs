//! Ember's module packer: a readable description in, a module file out.
//!
//! The description is JSON ([`Description`]); values are referred to by name — a
//! function's arguments, results and transients, and the module's constants — optionally
//! with a byte range. The packer resolves the names, lets hal-core's planner place the
//! transients in one arena, and writes the module.
//!
//! ```
//! let json = r#"{
//!   "name": "double",
//!   "executables": [{ "name": "add", "kernel": "add_f32" }],
//!   "functions": [{
//!     "name": "double",
//!     "arguments": [{ "name": "x", "bytes": 16 }],
//!     "results": [{ "name": "y", "bytes": 16 }],
//!     "steps": [{ "dispatch": { "executable": "add", "bindings": ["x", "x", "y"] } }]
//!   }]
//! }"#;
//! let description: ember_pack::Description = serde_json::from_str(json).unwrap();
//! let packed = ember_pack::pack(&description, std::path::Path::new(".")).unwrap();
//! let module = hal_core::module::Module::parse(&packed.bytes).unwrap();
//! assert_eq!(module.name(), "double");
//! ```

mod description;
mod pack;

pub use description::{
    Constant, ConstantData, Description, Dispatch, Executable, Function, Operand, Step, Value,
};
pub use pack::{pack, pack_file, PackError, Packed};
