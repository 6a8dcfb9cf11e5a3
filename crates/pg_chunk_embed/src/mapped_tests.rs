use super::*;

#[test]
fn maps_a_files_bytes_and_refuses_empty_or_missing_files() {
    let dir = std::env::temp_dir().join(format!("pg_chunk_mapped_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("table.bin");
    std::fs::write(&path, b"0123456789").unwrap();
    assert_eq!(MappedFile::open(&path).unwrap().bytes(), b"0123456789");
    std::fs::write(&path, b"").unwrap();
    assert_eq!(MappedFile::open(&path).err().unwrap().kind(), io::ErrorKind::InvalidData);
    assert_eq!(MappedFile::open(&dir.join("none")).err().unwrap().kind(), io::ErrorKind::NotFound);
    std::fs::remove_dir_all(&dir).unwrap();
}
