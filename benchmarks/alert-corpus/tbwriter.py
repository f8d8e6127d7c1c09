"""Minimal TensorBoard event-file writer (and reader) with the standard library only.

TFRecord framing: uint64 length, masked crc32c(length), data, masked crc32c(data).
Event protobuf encoded by hand:
  Event:   wall_time double (1), step int64 (2), file_version string (3), summary (5)
  Summary: value repeated (1)
  Value:   tag (1), simple_value float (2), metadata (9), tensor (8)
  SummaryMetadata: plugin_data (1) { plugin_name (1), content (2) }
  TensorProto: dtype (1) = DT_FLOAT 1 / DT_STRING 7, tensor_shape (2), tensor_content (4),
               float_val (5, packed), string_val (8)
"""
import os
import struct

# ---------------------------------------------------------------- crc32c (Castagnoli)
_POLY = 0x82F63B78
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ _POLY if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    t = _TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc(head)) + data + struct.pack("<I", masked_crc(data))


# ---------------------------------------------------------------- protobuf encoding
def _varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _ld(field, payload):
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    return _key(field, 2) + _varint(len(payload)) + payload


def _double(field, x):
    return _key(field, 1) + struct.pack("<d", x)


def _float(field, x):
    return _key(field, 5) + struct.pack("<f", x)


def _int(field, n):
    return _key(field, 0) + _varint(n)


def plugin_metadata(plugin_name, content=b"", display_name=None, description=None):
    pd = _ld(1, plugin_name)
    if content:
        pd += _ld(2, content)
    md = _ld(1, pd)
    if display_name is not None:
        md = _ld(2, display_name) + md if False else md + _ld(2, display_name)
    if description is not None:
        md += _ld(3, description)
    return md


def value_simple(tag, x):
    return _ld(1, tag) + _float(2, x)


def value_tensor_scalar(tag, x):
    """rank-0 DT_FLOAT tensor with the scalars plugin (tf.summary.scalar in TF2)."""
    tensor = _int(1, 1) + _ld(2, b"") + _ld(4, struct.pack("<f", x))
    return _ld(1, tag) + _ld(8, tensor) + _ld(9, plugin_metadata("scalars"))


def value_text(tag, text, plugin="text"):
    """DT_STRING tensor of shape [1] with the text plugin (SummaryWriter.add_text style)."""
    shape = _ld(2, _int(1, 1))         # TensorShapeProto.dim { size: 1 }
    tensor = _int(1, 7) + _ld(2, shape) + _ld(8, text)
    return _ld(1, tag) + _ld(8, tensor) + _ld(9, plugin_metadata(plugin))


def value_graph_keras(tag, text):
    """Keras model config: rank-0 DT_STRING tensor with the graph_keras_model plugin."""
    tensor = _int(1, 7) + _ld(2, b"") + _ld(8, text)
    return _ld(1, tag) + _ld(8, tensor) + _ld(9, plugin_metadata("graph_keras_model", b"1"))


def value_hparams(tag, content):
    """hparams plugin value: empty float tensor ... simple_value 0 like torch's hparams()."""
    return _ld(1, tag) + _float(2, 0.0) + _ld(9, plugin_metadata("hparams", content))


def event(wall_time, step=0, file_version=None, values=None):
    out = _double(1, wall_time)
    if step:
        out += _int(2, step)
    if file_version is not None:
        out += _ld(3, file_version)
    if values is not None:
        out += _ld(5, b"".join(_ld(1, v) for v in values))
    return out


class EventWriter:
    """Buffers records and writes one event file."""

    def __init__(self, path, wall_time):
        self.path = path
        self.records = [frame(event(wall_time, 0, file_version="brain.Event:2"))]

    def add(self, wall_time, step, values):
        self.records.append(frame(event(wall_time, step, values=values)))

    def add_raw(self, data):
        self.records.append(frame(data))

    def close(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path, "wb") as f:
            f.write(b"".join(self.records))


# ---------------------------------------------------------------- reading (for checks)
def _read_varint(b, i):
    shift = n = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, i


def parse_message(b):
    """[(field, wire, value)]; value is int, bytes or raw 4/8-byte chunk."""
    i, out = 0, []
    while i < len(b):
        k, i = _read_varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = _read_varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 2:
            n, i = _read_varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % w)
        out.append((f, w, v))
    return out


def read_records(path, check=True):
    data = open(path, "rb").read()
    i, out = 0, []
    while i < len(data):
        head = data[i:i + 8]
        (n,) = struct.unpack("<Q", head)
        (hc,) = struct.unpack("<I", data[i + 8:i + 12])
        rec = data[i + 12:i + 12 + n]
        (dc,) = struct.unpack("<I", data[i + 12 + n:i + 16 + n])
        if check:
            assert hc == masked_crc(head), "header crc"
            assert dc == masked_crc(rec), "data crc"
        out.append(rec)
        i += 16 + n
    return out


def decode_event(rec):
    ev = {"wall_time": None, "step": 0, "values": []}
    for f, w, v in parse_message(rec):
        if f == 1:
            ev["wall_time"] = struct.unpack("<d", v)[0]
        elif f == 2:
            ev["step"] = v
        elif f == 3:
            ev["file_version"] = v.decode()
        elif f == 5:
            for sf, sw, sv in parse_message(v):
                if sf != 1:
                    continue
                val = {}
                for vf, vw, vv in parse_message(sv):
                    if vf == 1:
                        val["tag"] = vv.decode()
                    elif vf == 2:
                        val["simple_value"] = struct.unpack("<f", vv)[0]
                    elif vf == 9:
                        val["metadata"] = vv
                    elif vf == 8:
                        t = {}
                        for tf, tw, tv in parse_message(vv):
                            if tf == 1:
                                t["dtype"] = tv
                            elif tf == 2:
                                t["shape"] = tv
                            elif tf == 4:
                                t["content"] = tv
                            elif tf == 5:
                                t["float_val"] = tv
                            elif tf == 8:
                                t.setdefault("string_val", []).append(tv)
                        val["tensor"] = t
                ev["values"].append(val)
        else:
            ev.setdefault("other", []).append((f, w, v))
    return ev
