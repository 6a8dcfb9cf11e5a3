//! `pg_chunk_optimize_model LIBONNXRUNTIME MODEL.onnx OUTPUT.onnx`: writes the optimised copy
//! of a transformer model (OUTPUT.onnx and its weights, OUTPUT.onnx.data) that backends load
//! with graph optimisation off (see `optimize_transformer`). scripts/models.sh runs it at
//! install time with the ONNX Runtime the backends load.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let arguments: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [library, model, output] = arguments.as_slice() else {
        eprintln!("usage: pg_chunk_optimize_model LIBONNXRUNTIME MODEL.onnx OUTPUT.onnx");
        return ExitCode::from(2);
    };
    match pg_chunk_embed::optimize_transformer(library, model, output) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("pg_chunk_optimize_model: {error}");
            ExitCode::FAILURE
        }
    }
}
