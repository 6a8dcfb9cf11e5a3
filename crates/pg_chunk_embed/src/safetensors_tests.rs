use super::*;

/// A safetensors file with the given header JSON and data bytes.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn error_of(bytes: &[u8]) -> String {
    match read_embedding_table(FileBytes::Read(bytes.to_vec()), "test.safetensors") {
        Ok(_) => panic!("expected an error"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn reads_the_embeddings_tensor() {
    let data = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, -6.5]);
    let header = r#"{"__metadata__":{"format":"pt"},"embeddings":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]}}"#;
    let table = read_embedding_table(FileBytes::Read(file(header, &data)), "t").unwrap();
    assert_eq!((table.rows, table.dimension), (3, 2));
    assert_eq!(table.row(2), Some(&[5.0, -6.5][..]));
    assert_eq!(table.row(3), None);
}

#[test]
fn takes_the_only_2d_tensor_whatever_its_name() {
    let data = f32_bytes(&[1.0, 2.0]);
    let header = r#"{"table":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}}"#;
    let table = read_embedding_table(FileBytes::Read(file(header, &data)), "t").unwrap();
    assert_eq!(table.values(), [1.0, 2.0]);
}

#[test]
fn reads_values_in_place_at_an_f32_boundary_and_copies_them_elsewhere() {
    let data = f32_bytes(&[1.0, 2.0, 3.0, 4.0]);
    for pad in 0..4 {
        // The header's length moves the data section by a byte at a time.
        let header =
            format!(r#"{{"embeddings":{{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}}}{}"#, " ".repeat(pad));
        let bytes = file(&header, &data);
        let aligned = (bytes.as_ptr() as usize + 8 + header.len()).is_multiple_of(4);
        let table = read_embedding_table(FileBytes::Read(bytes), "t").unwrap();
        assert_eq!(table.values(), [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(table.row(1), Some(&[3.0, 4.0][..]));
        assert_eq!(table.is_in_file(), aligned, "header of {} bytes", header.len());
    }
}

#[test]
fn refuses_bad_files_with_a_reason() {
    let data = f32_bytes(&[1.0, 2.0, 3.0, 4.0]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![1, 2, 3], "header too small"),
        (
            {
                let mut b = file("{}", &[]);
                b[0] = 200;
                b
            },
            "invalid header length",
        ),
        (file("not json", &[]), "invalid JSON in header"),
        (file("{}", &[]), "no 2-D tensor"),
        (file(r#"{"embeddings":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}}"#, &data[..8]), "dtype F16"),
        (file(r#"{"embeddings":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#, &data), "expected 2-D"),
        (file(r#"{"embeddings":{"dtype":"F32","shape":[2,0],"data_offsets":[0,0]}}"#, &[]), "dimension 0"),
        // Offsets that do not fit the shape, or run past the data, or leave data over.
        (file(r#"{"embeddings":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}}"#, &data), "invalid shape"),
        (file(r#"{"embeddings":{"dtype":"F32","shape":[3,2],"data_offsets":[0,24]}}"#, &data), "not fully covered"),
        (file(r#"{"embeddings":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]}}"#, &data), "not fully covered"),
        (file(r#"{"embeddings":{"dtype":"F32","shape":[2,2]}}"#, &data), "invalid JSON in header"),
        (
            file(r#"{"embeddings":{"dtype":"F99","shape":[2,2],"data_offsets":[0,16]}}"#, &data),
            "invalid JSON in header",
        ),
        (
            file(
                r#"{"a":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1,2],"data_offsets":[8,16]}}"#,
                &data,
            ),
            "several 2-D",
        ),
        (
            file(
                r#"{"embeddings":{"dtype":"F32","shape":[1,2],"data_offsets":[0,8]},"weights":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}"#,
                &data,
            ),
            "unsupported tensors [\"weights\"]",
        ),
    ];
    for (bytes, expected) in cases {
        let message = error_of(&bytes);
        assert!(message.contains(expected) && message.contains("test.safetensors"), "{expected}: {message}");
    }
}

/// The mapped file, as `StaticModel::load` maps it: the table is read in place, in the mapping.
#[test]
fn a_mapped_table_is_read_in_place_and_an_empty_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("pg_chunk_safetensors_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.safetensors");
    // A header of a multiple of 4 bytes puts the data at an f32 boundary of the page-aligned
    // mapping.
    let header = r#"{"embeddings":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}"#;
    let header = format!("{header}{}", " ".repeat(4 - header.len() % 4));
    std::fs::write(&path, file(&header, &f32_bytes(&[1.0, 2.0, 3.0, 4.0]))).unwrap();
    // SAFETY: a file of this test's own, not changed while mapped.
    let map = |path: &std::path::Path| unsafe { Mmap::map(&std::fs::File::open(path).unwrap()) }.unwrap();
    let mapped = map(&path);
    let address = mapped.as_ptr() as usize;
    let table = read_embedding_table(FileBytes::Mapped(mapped), "t").unwrap();
    assert!(table.is_in_file());
    assert_eq!(table.values().as_ptr() as usize, address + 8 + header.len());
    assert_eq!(table.row(1), Some(&[3.0, 4.0][..]));
    std::fs::write(&path, b"").unwrap();
    let message = match read_embedding_table(FileBytes::Mapped(map(&path)), "empty.safetensors") {
        Ok(_) => panic!("an empty file is no model"),
        Err(error) => error.to_string(),
    };
    assert!(message.contains("header too small"), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}
