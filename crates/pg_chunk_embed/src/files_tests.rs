use super::*;

#[test]
fn hashes_files_in_order_and_again_only_when_they_change() {
    let dir = std::env::temp_dir().join(format!("pg_chunk_files_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::write(&a, b"abc").unwrap();
    std::fs::write(&b, b"def").unwrap();
    let mut hashes = FileHashes::default();
    let mut reads = 0;
    let stamps = file_stamps(&[a.clone(), dir.join("missing"), b.clone()]).unwrap();
    assert_eq!(stamps.iter().map(|s| &s.0).collect::<Vec<_>>(), [&a, &b], "a missing file is left out");
    // sha256("abcdef")
    let abcdef = "bef57ec7f53a6d40beb640a780a639c83bc29ac8a9816f1fc6c5c6dcd93c4721";
    assert_eq!(hashes.sha256(&stamps, &mut || reads += 1).unwrap(), abcdef);
    let first_reads = reads;
    assert_eq!(hashes.sha256(&stamps, &mut || reads += 1).unwrap(), abcdef);
    assert_eq!(reads, first_reads, "the same stamps are not read again");
    std::fs::write(&b, b"defg").unwrap();
    let changed = file_stamps(&[a, b]).unwrap();
    assert_ne!(hashes.sha256(&changed, &mut || {}).unwrap(), abcdef);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn weights_are_the_model_file_and_its_data_file() {
    let [model, data] = weights_files(Path::new("/m/model.onnx"));
    assert_eq!((model, data), (PathBuf::from("/m/model.onnx"), PathBuf::from("/m/model.onnx.data")));
}
