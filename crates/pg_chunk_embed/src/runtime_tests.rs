use super::*;

#[test]
fn accepts_1_x_from_the_api_version_on() {
    let minimum = format!("1.{}.0", ort::MINOR_VERSION);
    for version in [minimum.as_str(), "1.31.1", "1.99.0\n"] {
        assert!(check_version(version).is_ok(), "{version}");
    }
}

#[test]
fn rejects_older_other_major_and_garbage_naming_both_versions() {
    let too_old = format!("1.{}.9", ort::MINOR_VERSION - 1);
    for version in [too_old.as_str(), "2.0.0", "0.99.0", "", "one.two", "1"] {
        match check_version(version) {
            Err(EmbedError::IncompatibleRuntime { found, required }) => {
                assert_eq!(found, version);
                assert_eq!(required, required_runtime_version());
                let message = EmbedError::IncompatibleRuntime { found, required }.to_string();
                assert!(message.contains(version) && message.contains("1."), "{message}");
            }
            other => panic!("{version:?}: expected IncompatibleRuntime, got {other:?}"),
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn signals_are_blocked_inside_and_restored_after() {
    fn blocked_mask() -> String {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        status.lines().find_map(|line| line.strip_prefix("SigBlk:")).unwrap().trim().to_string()
    }
    let before = blocked_mask();
    let inside = with_signals_blocked(blocked_mask);
    assert_ne!(inside, before);
    // SIGINT (2) and SIGTERM (15) are blocked inside
    let bits = u64::from_str_radix(&inside, 16).unwrap();
    assert!(bits & (1 << (2 - 1)) != 0 && bits & (1 << (15 - 1)) != 0, "{inside}");
    assert_eq!(blocked_mask(), before);
}

#[test]
fn missing_library_is_missing_file() {
    let path = Path::new("/nonexistent/libonnxruntime.so");
    match onnxruntime_version(path) {
        Err(EmbedError::MissingFile { path: reported, .. }) => assert_eq!(reported, path),
        other => panic!("expected MissingFile, got {other:?}"),
    }
}

#[test]
fn a_file_that_is_not_a_library_is_a_runtime_error() {
    let path = std::env::temp_dir().join(format!("pg_chunk_embed_not_a_lib_{}", std::process::id()));
    std::fs::write(&path, b"not an ELF file").unwrap();
    let result = onnxruntime_version(&path);
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(result, Err(EmbedError::Runtime(_))), "{result:?}");
}
