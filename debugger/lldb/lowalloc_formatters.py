# LLDB formatters for lowalloc's containers and memory resources: synthetic children (the
# elements) and one-line summaries (size, capacity, inline or heap; the text of strings; the
# figures of arenas and pools).
#
#   (lldb) command script import /usr/share/lowalloc/lldb/lowalloc_formatters.py
#
# They read the objects' memory only (no expression evaluation), so they work on core files.
import re

import lldb

_CATEGORY = "lowalloc"


def _child(val, *names):
    for name in names:
        val = val.GetChildMemberWithName(name)
    return val


def _uint(val):
    return val.GetValueAsUnsigned(0)


def _read_uint(process, address, size):
    error = lldb.SBError()
    value = process.ReadUnsignedFromMemory(address, size, error)
    return value if error.Success() else 0


def _pointer_size(val):
    return val.GetTarget().GetAddressByteSize()


def _int_arg(type_name, index):
    """The index-th integer template argument, from the type's name (lldb 14 has no API for it)."""
    inner = type_name[type_name.index("<") + 1:type_name.rindex(">")]
    depth, args, start = 0, [], 0
    for i, c in enumerate(inner):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(inner[start:i])
            start = i + 1
    args.append(inner[start:])
    return int(re.match(r"\s*(\d+)", args[index]).group(1))


def _field(t, name):
    """(offset, type) of the data member `name` ("" for an anonymous union) of t or of a base.

    Offsets rather than child values: lldb 14 rejects members whose type runs past the class as
    it declares them (small_vector's inline elements continue in the derived class)."""
    t = t.GetCanonicalType()
    for i in range(t.GetNumberOfFields()):
        f = t.GetFieldAtIndex(i)
        if (f.GetName() or "") == name:
            return f.GetOffsetInBytes(), f.GetType()
    for i in range(t.GetNumberOfDirectBaseClasses()):
        b = t.GetDirectBaseClassAtIndex(i)
        found = _field(b.GetType(), name)
        if found is not None:
            return b.GetOffsetInBytes() + found[0], found[1]
    return None


def _object(valobj):
    v = valobj.GetNonSyntheticValue()
    if v.GetType().IsReferenceType() or v.GetType().IsPointerType():
        v = v.Dereference()
    return v


def _type_name(val):
    return val.GetType().GetUnqualifiedType().GetCanonicalType().GetName()


class _Elements:
    """Synthetic children [0] .. [size - 1] of a vector."""

    def __init__(self, valobj, internal_dict):
        self.valobj = valobj
        self.update()

    def layout(self):
        raise NotImplementedError

    def update(self):
        self.data, self.size, self.capacity, self.where = 0, 0, 0, None
        self.elem = _object(self.valobj).GetType().GetCanonicalType().GetTemplateArgumentType(0)
        try:
            self.data, self.size, self.capacity, self.where = self.layout()
        except Exception:  # an object not constructed yet: no children
            pass
        return False

    def num_children(self):
        return self.size

    def has_children(self):
        return True

    def get_child_index(self, name):
        try:
            return int(name.lstrip("[").rstrip("]"))
        except ValueError:
            return -1

    def get_child_at_index(self, index):
        if index < 0 or index >= self.size:
            return None
        return self.valobj.CreateValueFromAddress(
            "[%d]" % index, self.data + index * self.elem.GetByteSize(), self.elem)


class SmallVector(_Elements):
    def layout(self):
        v = _object(self.valobj)
        process, base = v.GetProcess(), v.GetLoadAddress()
        meta = _read_uint(process, base + _field(v.GetType(), "meta_")[0], 8)
        rep = base + _field(v.GetType(), "")[0]  # the union of {data, capacity} and the elements
        size = meta & ((1 << 39) - 1)
        if meta >> 63:
            word = _pointer_size(v)
            return (_read_uint(process, rep, word), size, _read_uint(process, rep + word, word),
                    "heap")
        return rep, size, (meta >> 39) & ((1 << 24) - 1), "inline"


class InplaceVector(_Elements):
    def layout(self):
        v = _object(self.valobj)
        n = _int_arg(_type_name(v), 1)
        size_field = _field(v.GetType(), "size_")
        if n == 0 or size_field is None:
            return 0, 0, n, None
        base = v.GetLoadAddress()
        size = _read_uint(v.GetProcess(), base + size_field[0], size_field[1].GetByteSize())
        return base + _field(v.GetType(), "bytes_")[0], size, n, None


def vector_summary(valobj, internal_dict):
    p = _object(valobj)
    provider = SmallVector(p, None) if "small_vector" in _type_name(p) else InplaceVector(p, None)
    where = " (%s)" % provider.where if provider.where else ""
    return "size=%d, capacity=%d%s" % (provider.size, provider.capacity, where)


def _string_layout(val):
    """(address, size, capacity, where, char size) of a basic_string over a lowalloc storage."""
    t = val.GetType().GetCanonicalType()
    char_size = t.GetTemplateArgumentType(0).GetByteSize()
    storage_type = t.GetTemplateArgumentType(1).GetCanonicalType()
    storage_name = storage_type.GetName()
    process = val.GetProcess()
    storage = val.GetLoadAddress() + _field(t, "s_")[0]
    if storage_name.startswith("lowalloc::small_storage<"):
        n = _int_arg(storage_name, 1)
        offset, rep_type = _field(storage_type, "r_")
        base = storage + offset
        rep_bytes = rep_type.GetByteSize()
        units = rep_bytes // char_size
        slot = _read_uint(process, base + (units - 1) * char_size, char_size)
        heap_flag = 1 << (8 * char_size - 1)
        if slot & heap_flag:
            word = _pointer_size(val)  # heap_rep: pointer, size, capacity word
            ptr = _read_uint(process, base, word)
            size = _read_uint(process, base + word, word)
            cap = _read_uint(process, base + 2 * word, word)
            if rep_bytes == 3 * word:  # the flag shares the capacity word
                flag_bits = 8 * char_size
                if process.GetByteOrder() == lldb.eByteOrderLittle:
                    cap &= (1 << (8 * word - flag_bits)) - 1
                else:
                    cap >>= flag_bits
            return ptr, size, cap, "heap", char_size
        inline_capacity = min(n, units) - 1
        big = heap_flag - 1
        if inline_capacity >= big and slot == big:
            size = _read_uint(process, base + (units - 1) * char_size - 8, 8)
        else:
            size = inline_capacity - slot
        return base, size, inline_capacity, "inline", char_size
    if storage_name.startswith("lowalloc::fixed_storage<"):
        base = storage + _field(storage_type, "buf_")[0]
        n = storage_type.GetByteSize() // char_size - 1  # its only member: CharT buf_[N + 1]
        slot = _read_uint(process, base + n * char_size, char_size)
        big = (1 << (8 * char_size)) - 1
        if n >= big and slot == big:
            size = _read_uint(process, base + n * char_size - 8, 8)
        else:
            size = n - slot
        return base, size, n, None, char_size
    return None


_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r",
            34: '\\"', 92: "\\\\"}
_MAX_CHARS = 1024


def string_summary(valobj, internal_dict):
    layout = _string_layout(_object(valobj))
    if layout is None:
        return None
    address, size, capacity, where, char_size = layout
    shown = min(size, _MAX_CHARS)
    text = []
    if shown:
        error = lldb.SBError()
        data = valobj.GetProcess().ReadMemory(address, shown * char_size, error)
        if not error.Success() or data is None:
            return "<unreadable>"
        little = valobj.GetProcess().GetByteOrder() == lldb.eByteOrderLittle
        for i in range(0, len(data), char_size):
            u = int.from_bytes(data[i:i + char_size], "little" if little else "big")
            if u in _ESCAPES:
                text.append(_ESCAPES[u])
            elif 32 <= u < 127 or (char_size > 1 and u > 127 and chr(u).isprintable()):
                text.append(chr(u))
            else:
                text.append("\\x%x" % u)
    more = "..." if shown < size else ""
    where = ", " + where if where else ""
    return '"%s"%s size=%d, capacity=%d%s' % ("".join(text), more, size, capacity, where)


def arena_summary(valobj, internal_dict):
    v = _object(valobj)
    used = _uint(_child(v, "used_")) + _uint(_child(v, "cur_")) - _uint(_child(v, "region_"))
    return ("bytes_allocated=%d, bytes_upstream=%d, chunks=%d, inline_capacity=%d, remaining=%d"
            % (used, _uint(_child(v, "bytes_upstream_")), _uint(_child(v, "chunk_count_")),
               _uint(_child(v, "inline_end_")) - _uint(_child(v, "inline_begin_")),
               _uint(_child(v, "end_")) - _uint(_child(v, "cur_"))))


def pool_summary(valobj, internal_dict):
    v = _object(valobj)
    core = _child(v, "core_")
    head = _uint(_child(v, "recycled_"))
    recycled = _read_uint(v.GetProcess(), head + _pointer_size(v), 8) if head else 0
    in_use = _uint(_child(core, "in_use_"))
    if _uint(_child(core, "cur_slab_")):
        in_use += (bin(_uint(_child(core, "cur_valid_"))).count("1") -
                   bin(_uint(_child(core, "cur_bits_"))).count("1"))
    return ("slot_size=%d, slots_in_use=%d, slabs=%d, bytes_upstream=%d, "
            "oversize_allocations=%d, recycled=%d"
            % (_uint(_child(core, "slot_size_")), in_use - recycled, _uint(_child(core, "slabs_")),
               _uint(_child(core, "slabs_")) * _uint(_child(core, "slab_bytes_")) +
               _uint(_child(core, "big_bytes_")), _uint(_child(core, "big_count_")), recycled))


def __lldb_init_module(debugger, internal_dict):
    m = __name__
    vectors = [r"^lowalloc::small_vector<.+>$", r"^lowalloc::small_vector_base<.+>$"]
    for regex in vectors:
        debugger.HandleCommand('type synthetic add -w %s -x "%s" -l %s.SmallVector'
                               % (_CATEGORY, regex, m))
        debugger.HandleCommand('type summary add -w %s -e -x "%s" -F %s.vector_summary'
                               % (_CATEGORY, regex, m))
    regex = r"^lowalloc::inplace_vector<.+>$"
    debugger.HandleCommand('type synthetic add -w %s -x "%s" -l %s.InplaceVector'
                           % (_CATEGORY, regex, m))
    debugger.HandleCommand('type summary add -w %s -e -x "%s" -F %s.vector_summary'
                           % (_CATEGORY, regex, m))
    debugger.HandleCommand('type summary add -w %s -x "^lowalloc::basic_string<.+>$" '
                           '-F %s.string_summary' % (_CATEGORY, m))
    debugger.HandleCommand('type summary add -w %s -x "^lowalloc::arena(<.+>|_base)$" '
                           '-F %s.arena_summary' % (_CATEGORY, m))
    debugger.HandleCommand('type summary add -w %s "lowalloc::pool" -F %s.pool_summary'
                           % (_CATEGORY, m))
    debugger.HandleCommand("type category enable %s" % _CATEGORY)
