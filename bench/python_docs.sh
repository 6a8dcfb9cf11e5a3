# Sourced by the bench scripts that read Python's documentation: Debian's python3.11-doc, the reST
# sources of the Python 3.11 manual under html/_sources.

# Downloads python3.11-doc into DIR (once) and unpacks it there afresh; sets `deb` to the package
# file and `sources` to its reST sources.
unpack_python_docs() {
    local dir=$1
    mkdir -p "$dir"
    deb=$(compgen -G "$dir/python3.11-doc_*_all.deb" | head -n1 || true)
    if [ -z "$deb" ]; then
        (cd "$dir" && apt-get download python3.11-doc)
        deb=$(compgen -G "$dir/python3.11-doc_*_all.deb" | head -n1)
    fi
    rm -rf "$dir/doc" && dpkg-deb -x "$deb" "$dir/doc"
    sources=$dir/doc/usr/share/doc/python3.11/html/_sources
}
