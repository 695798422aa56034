"""DT_NEEDED of an ELF64 little-endian shared object, without readelf."""

import struct


def dt_needed(src):
    """The DT_NEEDED entries of an ELF64 LE shared object: `src` is a path, bytes or a file."""
    if isinstance(src, (bytes, bytearray)):
        data = bytes(src)
    elif hasattr(src, "read"):
        data = src.read()
    else:
        with open(src, "rb") as f:
            data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not an ELF64 LE file"
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(e_phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", data, e_phoff + i * e_phentsize)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)
    assert dynamic is not None, "no PT_DYNAMIC: not a shared object"

    def file_offset(vaddr):
        for v, o, sz in loads:
            if v <= vaddr < v + sz:
                return vaddr - v + o
        raise AssertionError(f"address {vaddr:#x} not in a PT_LOAD segment")

    entries = []
    off, end = dynamic[0], dynamic[0] + dynamic[1]
    while off < end:
        tag, val = struct.unpack_from("<qQ", data, off)
        off += 16
        if tag == 0:
            break
        entries.append((tag, val))
    strtab = file_offset(next(v for t, v in entries if t == 5))  # DT_STRTAB
    names = []
    for tag, val in entries:
        if tag == 1:  # DT_NEEDED
            s = strtab + val
            names.append(data[s:data.index(b"\0", s)].decode())
    return names
