# gdb pretty printers for lowalloc's containers and memory resources.
#
# Loaded automatically from the .debug_gdb_scripts section of a program built with lowalloc's
# headers (see docs/containers.md, "In a debugger"), or by hand:
#   (gdb) source /usr/share/lowalloc/gdb/lowalloc_printers.py
# The printers read the objects' memory only (no function calls), so they work on core files.
import gdb
import gdb.printing
import gdb.xmethod


def _template_int(t, i):
    return int(t.template_argument(i))


def _has_field(t, name):
    t = t.strip_typedefs()
    for f in t.fields():
        if f.name == name:
            return True
        if f.is_base_class and _has_field(f.type, name):
            return True
    return False


def _unsigned(size):
    return gdb.lookup_type({1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
                            8: "unsigned long long"}[size])


def _load(address, size):
    """The unsigned integer of `size` bytes at `address`."""
    return int(gdb.Value(address).cast(_unsigned(size).pointer()).dereference())


def _print_limit():
    limit = gdb.parameter("print elements")
    return None if limit is None or limit == 0 else int(limit)


_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r",
            34: '\\"', 92: "\\\\"}


def _quote(address, char_size, size):
    """The text as gdb prints a char array: quoted, escaped, cut at `print elements`."""
    limit = _print_limit()
    shown = size if limit is None else min(size, limit)
    units = []
    if shown:
        data = bytes(gdb.selected_inferior().read_memory(address, shown * char_size))
        units = [int.from_bytes(data[i:i + char_size], "little" if _little() else "big")
                 for i in range(0, len(data), char_size)]
    out = []
    for u in units:
        if u in _ESCAPES:
            out.append(_ESCAPES[u])
        elif 32 <= u < 127:
            out.append(chr(u))
        elif char_size == 1 or u < 32 or u == 127:
            out.append("\\%03o" % u if char_size == 1 or u < 256 else "\\x%x" % u)
        else:
            out.append(chr(u) if chr(u).isprintable() else "\\x%x" % u)
    return '"' + "".join(out) + '"' + ("..." if shown < size else "")


def _little():
    return "little endian" in gdb.execute("show endian", to_string=True)


class _ElementsPrinter:
    """size, capacity and the elements as an array of children."""

    def __init__(self, name, data, size, capacity, where):
        self.name = name
        self.data = data
        self.size = size
        self.capacity = capacity
        self.where = where

    def to_string(self):
        where = " (%s)" % self.where if self.where else ""
        return "%s of size %d, capacity %d%s" % (self.name, self.size, self.capacity, where)

    def children(self):
        for i in range(self.size):
            yield "[%d]" % i, (self.data + i).dereference()

    def num_children(self):
        return self.size

    def display_hint(self):
        return "array"


def small_vector_printer(val, name):
    t = val.type.strip_typedefs()
    elem = t.template_argument(0)
    meta = int(val["meta_"])
    size = meta & ((1 << 39) - 1)
    if meta >> 63:
        heap = val["heap_"]
        return _ElementsPrinter(name, heap["data"], size, int(heap["capacity"]), "heap")
    data = val["raw_"].address.cast(elem.pointer())
    return _ElementsPrinter(name, data, size, (meta >> 39) & ((1 << 24) - 1), "inline")


def inplace_vector_printer(val, name):
    t = val.type.strip_typedefs()
    elem = t.template_argument(0)
    n = _template_int(t, 1)
    if n == 0 or not _has_field(t, "size_"):
        return _ElementsPrinter(name, gdb.Value(0).cast(elem.pointer()), 0, n, None)
    data = val["bytes_"].address.cast(elem.pointer())
    return _ElementsPrinter(name, data, int(val["size_"]), n, None)


class _StringPrinter:
    def __init__(self, address, char_size, size, capacity, where):
        self.address = address
        self.char_size = char_size
        self.size = size
        self.capacity = capacity
        self.where = where

    def to_string(self):
        where = ", " + self.where if self.where else ""
        return "%s (size %d, capacity %d%s)" % (_quote(self.address, self.char_size, self.size),
                                                 self.size, self.capacity, where)


def _small_storage(s, storage_type, char_size):
    # See small_storage in <lowalloc/string_storage.hpp>: the last character slot of the union
    # holds the free inline capacity; its top bit is the heap flag.
    n = _template_int(storage_type, 1)
    rep = s["r_"]
    buf = rep["buf"]
    units = buf.type.sizeof // char_size
    base = int(buf.address)
    slot = _load(base + (units - 1) * char_size, char_size)
    heap_flag = 1 << (8 * char_size - 1)
    if slot & heap_flag:
        heap = rep["heap"]
        word = int(heap["cap_word"])
        word_bits = 8 * heap["cap_word"].type.sizeof
        if buf.type.sizeof == 3 * gdb.lookup_type("void").pointer().sizeof:
            flag_bits = 8 * char_size
            cap = (word & ((1 << (word_bits - flag_bits)) - 1)) if _little() else word >> flag_bits
        else:
            cap = word
        return int(heap["ptr"]), int(heap["size"]), cap, "heap"
    inline_capacity = min(n, units) - 1
    big = heap_flag - 1
    if inline_capacity >= big and slot == big:
        size = _load(base + (units - 1) * char_size - 8, 8)
    else:
        size = inline_capacity - slot
    return base, size, inline_capacity, "inline"


def _fixed_storage(s, storage_type, char_size):
    # See fixed_storage: slot N holds N - size, or its maximum with the size in the 8 bytes before.
    n = _template_int(storage_type, 1)
    base = int(s["buf_"].address)
    slot = _load(base + n * char_size, char_size)
    big = (1 << (8 * char_size)) - 1
    if n >= big and slot == big:
        size = _load(base + n * char_size - 8, 8)
    else:
        size = n - slot
    return base, size, n, None


def basic_string_printer(val, name):
    t = val.type.strip_typedefs()
    char_size = t.template_argument(0).sizeof
    storage = t.template_argument(1).strip_typedefs()
    s = val["s_"]
    if storage.name.startswith("lowalloc::small_storage<"):
        address, size, capacity, where = _small_storage(s, storage, char_size)
    elif storage.name.startswith("lowalloc::fixed_storage<"):
        address, size, capacity, where = _fixed_storage(s, storage, char_size)
    else:
        return None  # a storage of the user's own: gdb prints its members
    return _StringPrinter(address, char_size, size, capacity, where)


class _FieldsPrinter:
    """A summary line and named figures, like the type's stats()."""

    def __init__(self, name, fields):
        self.name = name
        self.fields = fields

    def to_string(self):
        return self.name

    def children(self):
        for k, v in self.fields:
            yield k, v


def arena_printer(val, name):
    # bytes_allocated() without AddressSanitizer: used_ + (cur_ - region_).
    used = int(val["used_"]) + (int(val["cur_"]) - int(val["region_"]))
    return _FieldsPrinter(name, [
        ("bytes_allocated", used),
        ("bytes_upstream", int(val["bytes_upstream_"])),
        ("chunks", int(val["chunk_count_"])),
        ("inline_capacity", int(val["inline_end_"]) - int(val["inline_begin_"])),
        ("remaining", int(val["end_"]) - int(val["cur_"])),
    ])


def _popcount(x):
    return bin(x).count("1")


def _pool_core_fields(core, recycled):
    in_use = int(core["in_use_"])
    if int(core["cur_slab_"]) != 0:
        in_use += _popcount(int(core["cur_valid_"])) - _popcount(int(core["cur_bits_"]))
    return [
        ("slot_size", int(core["slot_size_"])),
        ("slot_align", int(core["slot_align_"])),
        ("slots_in_use", in_use - recycled),
        ("slabs", int(core["slabs_"])),
        ("bytes_upstream", int(core["slabs_"]) * int(core["slab_bytes_"]) +
         int(core["big_bytes_"])),
        ("oversize_allocations", int(core["big_count_"])),
    ]


def pool_printer(val, name):
    head = int(val["recycled_"])
    # The top slot of the recycle list holds {next, depth}: depth is the list's length.
    recycled = _load(head + gdb.lookup_type("void").pointer().sizeof, 8) if head else 0
    return _FieldsPrinter(name, _pool_core_fields(val["core_"], recycled) +
                          [("recycled", recycled)])


def synchronized_pool_printer(val, name):
    shared = val["shared_"]
    if int(shared) == 0:
        return _FieldsPrinter(name, [])
    # The central pool cannot tell the slots in use from those in the threads' caches.
    fields = _pool_core_fields(shared.dereference()["core"], 0)
    return _FieldsPrinter(name, [(k if k != "slots_in_use" else "slots_in_use_or_cached", v)
                                 for k, v in fields])


class _Printer:
    def __init__(self):
        self.name = "lowalloc"
        self.enabled = True
        self.subprinters = []
        self._rules = [
            ("lowalloc::small_vector<", "lowalloc::small_vector", small_vector_printer),
            ("lowalloc::small_vector_base<", "lowalloc::small_vector_base", small_vector_printer),
            ("lowalloc::inplace_vector<", "lowalloc::inplace_vector", inplace_vector_printer),
            ("lowalloc::basic_string<", "lowalloc::basic_string", basic_string_printer),
            ("lowalloc::arena<", None, arena_printer),
            ("lowalloc::arena_base", "lowalloc::arena_base", arena_printer),
            ("lowalloc::synchronized_pool", "lowalloc::synchronized_pool",
             synchronized_pool_printer),
            ("lowalloc::pool", "lowalloc::pool", pool_printer),
        ]

    def __call__(self, val):
        t = val.type
        if t.code == gdb.TYPE_CODE_REF or t.code == getattr(gdb, "TYPE_CODE_RVALUE_REF", -1):
            t = t.target()
        t = t.unqualified().strip_typedefs()
        name = t.tag or t.name
        if not name:
            return None
        for prefix, shown, make in self._rules:
            if name == prefix or (prefix.endswith("<") and name.startswith(prefix)):
                return make(val, shown or _short_name(t))
        return None


def _short_name(t):
    # lowalloc::arena<1024>: the name with its one integer argument.
    try:
        return "lowalloc::arena<%d>" % _template_int(t, 0)
    except RuntimeError:
        return t.name


class _IndexWorker(gdb.xmethod.XMethodWorker):
    """v[i] and v.size() without calling the program (its operator[] may not even be emitted)."""

    def __init__(self, elements, method):
        self.elements = elements  # value -> (pointer to the first element, size)
        self.method = method

    def get_arg_types(self):
        return gdb.lookup_type("unsigned long") if self.method == "operator[]" else None

    def get_result_type(self, obj, *args):
        return None

    def __call__(self, obj, *args):
        if obj.type.code == gdb.TYPE_CODE_PTR:
            obj = obj.dereference()
        data, size = self.elements(obj)
        if self.method == "size":
            return gdb.Value(size).cast(gdb.lookup_type("unsigned long"))
        return (data + int(args[0])).dereference()


def _vector_elements(val):
    p = _make(val)
    return p.data, p.size


def _string_elements(val):
    p = _make(val)
    char = val.type.strip_typedefs().template_argument(0)
    return gdb.Value(p.address).cast(char.pointer()), p.size


class _IndexMatcher(gdb.xmethod.XMethodMatcher):
    def __init__(self):
        gdb.xmethod.XMethodMatcher.__init__(self, "lowalloc")
        self._kinds = [("lowalloc::small_vector<", _vector_elements),
                       ("lowalloc::small_vector_base<", _vector_elements),
                       ("lowalloc::inplace_vector<", _vector_elements),
                       ("lowalloc::basic_string<", _string_elements)]

    def match(self, class_type, method_name):
        if method_name not in ("operator[]", "size"):
            return None
        name = class_type.unqualified().strip_typedefs().tag or ""
        for prefix, elements in self._kinds:
            if name.startswith(prefix):
                if elements is _string_elements and _make_for_type(class_type) is None:
                    return None
                return _IndexWorker(elements, method_name)
        return None


_PRINTER = _Printer()


def _make(val):
    return _PRINTER(val)


def _make_for_type(t):
    storage = t.strip_typedefs().template_argument(1).strip_typedefs().name or ""
    return storage if storage.startswith(("lowalloc::small_storage<",
                                          "lowalloc::fixed_storage<")) else None


def register(objfile=None):
    """Registers the printers and the xmethods for objfile (or globally), once."""
    target = objfile if objfile is not None else gdb
    for p in getattr(target, "pretty_printers", []):
        if getattr(p, "name", None) == "lowalloc":
            return
    gdb.printing.register_pretty_printer(objfile, _Printer())
    gdb.xmethod.register_xmethod_matcher(objfile, _IndexMatcher())


register(gdb.current_objfile())
