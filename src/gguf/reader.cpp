// GGUF parsing and validation. The layout (v2 and v3 are the same on disk; v1 used 32-bit
// counts and is rejected): magic "GGUF", u32 version, u64 tensor count, u64 metadata count, the
// metadata key/values, the tensor infos (name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset
// relative to the data section), padding to `general.alignment` (default 32), the tensor data.
#include "gguf/reader.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/file.h"
#include "gguf/byte_cursor.h"

namespace strata {

namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, 1 dim, type, offset

uint64_t fixed_value_size(GgufValueType t) {
    switch (t) {
        case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::BOOL: return 1;
        case GgufValueType::U16: case GgufValueType::I16: return 2;
        case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::F32: return 4;
        case GgufValueType::U64: case GgufValueType::I64: case GgufValueType::F64: return 8;
        default: return 0;  // string, array: variable
    }
}

template <typename T>
Status read_scalar(ByteCursor& cur, GgufValue* out, GgufValueType t, std::string_view what) {
    T v{};
    STRATA_TRY(cur.read(&v, what));
    out->type = t;
    if constexpr (std::is_floating_point_v<T>) {
        out->data = static_cast<double>(v);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
        out->data = v;
    } else {
        out->data = static_cast<int64_t>(v);
    }
    return Status::ok();
}

Status read_value(ByteCursor& cur, GgufValueType type, const GgufLimits& limits, uint32_t depth,
                  const std::string& what, GgufValue* out) {
    switch (type) {
        case GgufValueType::U8: return read_scalar<uint8_t>(cur, out, type, what);
        case GgufValueType::I8: return read_scalar<int8_t>(cur, out, type, what);
        case GgufValueType::U16: return read_scalar<uint16_t>(cur, out, type, what);
        case GgufValueType::I16: return read_scalar<int16_t>(cur, out, type, what);
        case GgufValueType::U32: return read_scalar<uint32_t>(cur, out, type, what);
        case GgufValueType::I32: return read_scalar<int32_t>(cur, out, type, what);
        case GgufValueType::F32: return read_scalar<float>(cur, out, type, what);
        case GgufValueType::U64: return read_scalar<uint64_t>(cur, out, type, what);
        case GgufValueType::I64: return read_scalar<int64_t>(cur, out, type, what);
        case GgufValueType::F64: return read_scalar<double>(cur, out, type, what);
        case GgufValueType::BOOL: {
            uint8_t b = 0;
            STRATA_TRY(cur.read(&b, what));
            if (b > 1) return Status::error("{}: expected a bool (0 or 1), got {}", what, b);
            *out = GgufValue::make_bool(b != 0);
            return Status::ok();
        }
        case GgufValueType::STRING: {
            std::string s;
            STRATA_TRY(cur.read_string(&s, limits.max_string_bytes, what));
            *out = GgufValue::make_string(std::move(s));
            return Status::ok();
        }
        case GgufValueType::ARRAY: {
            if (depth >= limits.max_array_depth) {
                return Status::error("{}: expected arrays nested at most {} deep, got deeper", what,
                                     limits.max_array_depth);
            }
            uint32_t raw_elem = 0;
            uint64_t count = 0;
            STRATA_TRY(cur.read(&raw_elem, what));
            if (raw_elem >= kGgufValueTypeCount) {
                return Status::error("{}: expected an array element type below {}, got {}", what,
                                     kGgufValueTypeCount, raw_elem);
            }
            auto elem = static_cast<GgufValueType>(raw_elem);
            STRATA_TRY(cur.read(&count, what));
            if (count > limits.max_array_items) {
                return Status::error("{}: expected at most {} array items, got {}", what, limits.max_array_items,
                                     count);
            }
            // Every element takes at least this many bytes, so a count the file cannot hold is
            // rejected before anything is allocated for it.
            uint64_t min_elem = fixed_value_size(elem);
            if (min_elem == 0) min_elem = elem == GgufValueType::STRING ? 8 : 12;
            if (count > cur.remaining() / min_elem) {
                return Status::error("{}: expected an array that fits in the file, got {} items of {} "
                                     "(at least {} bytes) with {} bytes left",
                                     what, count, gguf_value_type_name(elem), count * min_elem, cur.remaining());
            }
            std::vector<GgufValue> items(static_cast<size_t>(count));
            for (uint64_t i = 0; i < count; ++i) {
                STRATA_TRY(read_value(cur, elem, limits, depth + 1, what, &items[static_cast<size_t>(i)]));
            }
            *out = GgufValue::make_array(elem, std::move(items));
            return Status::ok();
        }
    }
    return Status::error("{}: expected a value type below {}, got {}", what, kGgufValueTypeCount,
                         static_cast<uint32_t>(type));
}

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

std::string GgufTensorInfo::shape_string() const {
    std::string s = "[";
    for (uint32_t i = 0; i < n_dims; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

struct GgufFile::Part {
    MappedFile mapping;
    const uint8_t* data = nullptr;
    uint64_t size = 0;
    std::string name;
};

GgufFile::GgufFile() = default;
GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

Status GgufFile::parse_part(size_t part_index, const GgufLimits& limits, bool is_first) {
    const Part& part = *parts_[part_index];
    ByteCursor cur(part.data, part.size);

    uint32_t magic = 0, version = 0;
    STRATA_TRY(cur.read(&magic, "GGUF header"));
    if (magic != kGgufMagic) {
        char shown[5] = {0};
        std::memcpy(shown, &magic, 4);
        for (char& c : shown) if (c && (c < 32 || c > 126)) c = '?';
        return Status::error("not a GGUF file: expected magic \"GGUF\", got \"{}\" (is this a GGUF model?)", shown);
    }
    STRATA_TRY(cur.read(&version, "GGUF version"));
    if (version != 2 && version != 3) {
        return Status::error("unsupported GGUF version: expected 2 or 3, got {}{}", version,
                             version == 1 ? " (convert the file again with a current llama.cpp)" : "");
    }
    uint64_t n_tensors = 0, n_kv = 0;
    STRATA_TRY(cur.read(&n_tensors, "tensor count"));
    STRATA_TRY(cur.read(&n_kv, "metadata count"));
    if (n_tensors > limits.max_tensors || n_tensors > cur.remaining() / kMinTensorInfoBytes) {
        return Status::error("tensor count: expected at most {} tensors that fit in {} bytes, got {}",
                             limits.max_tensors, part.size, n_tensors);
    }
    if (n_kv > limits.max_metadata_entries || n_kv > cur.remaining() / 13) {  // key len + type + 1 byte
        return Status::error("metadata count: expected at most {} entries that fit in {} bytes, got {}",
                             limits.max_metadata_entries, part.size, n_kv);
    }

    uint64_t alignment = 32;
    std::vector<GgufMetadataEntry> entries;
    entries.reserve(static_cast<size_t>(n_kv));
    std::unordered_map<std::string, size_t> seen;
    for (uint64_t i = 0; i < n_kv; ++i) {
        GgufMetadataEntry e;
        std::string what = fmt::format("metadata entry {}", i);
        STRATA_TRY(cur.read_string(&e.key, 1 << 16, what + " key"));
        what = fmt::format("metadata entry {} ({})", i, e.key);
        uint32_t raw_type = 0;
        STRATA_TRY(cur.read(&raw_type, what));
        if (raw_type >= kGgufValueTypeCount) {
            return Status::error("{}: expected a value type below {}, got {}", what, kGgufValueTypeCount, raw_type);
        }
        STRATA_TRY(read_value(cur, static_cast<GgufValueType>(raw_type), limits, 0, what, &e.value));
        if (!seen.emplace(e.key, entries.size()).second) {
            return Status::error("{}: duplicate key (each key may appear once)", what);
        }
        if (e.key == "general.alignment") {
            if (e.value.type != GgufValueType::U32 || !is_power_of_two(e.value.as_uint())) {
                return Status::error("general.alignment: expected a u32 power of two, got {} {}",
                                     gguf_value_type_name(e.value.type), e.value.to_display_string());
            }
            alignment = e.value.as_uint();
        }
        entries.push_back(std::move(e));
    }

    // Tensor infos.
    std::vector<GgufTensorInfo> infos(static_cast<size_t>(n_tensors));
    for (uint64_t i = 0; i < n_tensors; ++i) {
        GgufTensorInfo& t = infos[static_cast<size_t>(i)];
        std::string what = fmt::format("tensor info {}", i);
        STRATA_TRY(cur.read_string(&t.name, 1 << 16, what + " name"));
        what = fmt::format("tensor info {} ({})", i, t.name);
        STRATA_TRY(cur.read(&t.n_dims, what));
        if (t.n_dims < 1 || t.n_dims > kGgufMaxDims) {
            return Status::error("{}: expected 1 to {} dimensions, got {}", what, kGgufMaxDims, t.n_dims);
        }
        uint64_t elements = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            STRATA_TRY(cur.read(&t.ne[d], what));
            if (t.ne[d] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
                return Status::error("{}: dimension {} is negative or too large ({})", what, d, t.ne[d]);
            }
            if (t.ne[d] != 0 && elements > std::numeric_limits<int64_t>::max() / t.ne[d]) {
                return Status::error("{}: the product of the dimensions {} overflows 64 bits", what,
                                     t.shape_string());
            }
            elements *= t.ne[d];
        }
        t.n_elements = elements;
        uint32_t raw_type = 0;
        STRATA_TRY(cur.read(&raw_type, what));
        const TensorTypeInfo* type_info = tensor_type_info(raw_type);
        if (!type_info) {
            return Status::error("{}: unknown tensor type id {} (the file may need a newer Strata)", what, raw_type);
        }
        t.type = type_info->type;
        if (!type_info->row_fits(t.ne[0])) {
            return Status::error("{}: expected a row length that is a multiple of {} for {}, got {}", what,
                                 type_info->block_size, type_info->name, t.ne[0]);
        }
        uint64_t rows = t.ne[0] == 0 ? 0 : elements / t.ne[0];
        uint64_t row_bytes = type_info->row_bytes(t.ne[0]);
        if (row_bytes != 0 && rows > std::numeric_limits<uint64_t>::max() / row_bytes) {
            return Status::error("{}: byte size of {} {} overflows 64 bits", what, type_info->name, t.shape_string());
        }
        t.n_bytes = row_bytes * rows;
        STRATA_TRY(cur.read(&t.offset, what));
        if (t.offset % alignment != 0) {
            return Status::error("{}: expected a data offset aligned to {}, got {}", what, alignment, t.offset);
        }
        t.file_index = static_cast<uint32_t>(part_index);
    }

    // Data section: starts at the next multiple of the alignment; every tensor must lie inside it
    // and no two tensors may overlap.
    uint64_t data_start = (cur.position() + alignment - 1) / alignment * alignment;
    if (n_tensors > 0 && data_start > part.size) {
        return Status::error("data section: expected it to start at byte {}, but the file has only {} bytes "
                             "(is it truncated?)",
                             data_start, part.size);
    }
    uint64_t data_bytes = part.size > data_start ? part.size - data_start : 0;
    for (auto& t : infos) {
        if (t.offset > data_bytes || t.n_bytes > data_bytes - t.offset) {
            return Status::error("tensor {}: expected its {} bytes at data offset {} inside the file's {} data "
                                 "bytes, got a range past the end (is the file truncated?)",
                                 t.name, t.n_bytes, t.offset, data_bytes);
        }
        t.offset += data_start;
    }
    std::vector<const GgufTensorInfo*> by_offset;
    by_offset.reserve(infos.size());
    for (const auto& t : infos) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
        const auto* prev = by_offset[i - 1];
        if (prev->n_bytes > 0 && by_offset[i]->offset < prev->offset + prev->n_bytes) {
            return Status::error("tensor {}: its data overlaps tensor {} (offsets {} and {})", by_offset[i]->name,
                                 prev->name, by_offset[i]->offset, prev->offset);
        }
    }

    if (is_first) {
        version_ = version;
        alignment_ = alignment;
        metadata_ = std::move(entries);
        metadata_index_ = std::move(seen);
    }
    for (auto& t : infos) {
        if (!tensor_index_.emplace(t.name, tensors_.size()).second) {
            return Status::error("tensor {}: appears twice (each tensor name may appear once)", t.name);
        }
        tensors_.push_back(std::move(t));
    }
    return Status::ok();
}

Result<GgufFile> GgufFile::parse_memory(const uint8_t* data, uint64_t size, const std::string& name,
                                        const GgufLimits& limits) {
    GgufFile f;
    f.path_ = name;
    f.file_paths_ = {name};
    auto part = std::make_unique<Part>();
    part->data = data;
    part->size = size;
    part->name = name;
    f.parts_.push_back(std::move(part));
    STRATA_TRY(f.parse_part(0, limits, true));
    return f;
}

namespace {
std::function<void(const std::string&, uint64_t, uint64_t)>& load_progress() {
    static std::function<void(const std::string&, uint64_t, uint64_t)> progress;
    return progress;
}
}  // namespace

void set_gguf_load_progress(std::function<void(const std::string& path, uint64_t done, uint64_t total)> progress) {
    load_progress() = std::move(progress);
}

Result<GgufFile> GgufFile::open(const std::string& path, const GgufLimits& limits, GgufLoad load) {
    GgufFile f;
    f.path_ = path;
    auto map_part = [&](const std::string& p) -> Status {
        const auto& progress = load_progress();
        STRATA_ASSIGN_OR_RETURN(MappedFile m, load == GgufLoad::Memory
                                                  ? MappedFile::read_into_memory(p, [&](uint64_t done, uint64_t total) {
                                                        if (progress) progress(p, done, total);
                                                    })
                                                  : MappedFile::map(p));
        auto part = std::make_unique<Part>();
        part->data = m.data();
        part->size = m.size();
        part->name = p;
        part->mapping = std::move(m);
        f.parts_.push_back(std::move(part));
        f.file_paths_.push_back(p);
        return Status::ok();
    };

    std::vector<std::string> paths = gguf_split_paths(path, 0);
    STRATA_TRY(map_part(paths[0]).with_context(paths[0]));
    STRATA_TRY(f.parse_part(0, limits, true).with_context(paths[0]));

    uint64_t split_count = f.get_uint("split.count", 1);
    if (split_count > 1 || paths.size() > 1) {
        if (split_count > 9999) return Status::error("{}: split.count: expected at most 9999, got {}", paths[0], split_count);
        if (paths.size() != split_count) paths = gguf_split_paths(paths[0], static_cast<uint32_t>(split_count));
        if (paths.size() != split_count) {
            return Status::error("{}: the file says it is one of {} parts, but its name does not have the "
                                 "-00001-of-{:05d}.gguf form needed to find the others",
                                 paths[0], split_count, split_count);
        }
        for (size_t i = 1; i < paths.size(); ++i) {
            if (!file_exists(paths[i])) {
                return Status::error("split model: expected part {} of {} at {}, but it is missing (download "
                                     "every part into the same folder)",
                                     i + 1, paths.size(), paths[i]);
            }
            STRATA_TRY(map_part(paths[i]).with_context(paths[i]));
            STRATA_TRY(f.parse_part(i, limits, false).with_context(paths[i]));
        }
        // split.tensors.count in the first part says how many tensors all parts hold together.
        if (const GgufValue* total = f.find("split.tensors.count"); total && total->is_integer()) {
            if (total->as_uint() != f.tensors_.size()) {
                return Status::error("split model {}: expected {} tensors across {} parts, got {}", paths[0],
                                     total->as_uint(), paths.size(), f.tensors_.size());
            }
        }
    }
    return f;
}

uint64_t GgufFile::total_file_bytes() const {
    uint64_t total = 0;
    for (const auto& p : parts_) total += p->size;
    return total;
}

const GgufValue* GgufFile::find(const std::string& key) const {
    auto it = metadata_index_.find(key);
    return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

int64_t GgufFile::get_int(const std::string& key, int64_t fallback) const {
    const GgufValue* v = find(key);
    return v && (v->is_integer() || v->is_bool()) ? v->as_int() : fallback;
}
uint64_t GgufFile::get_uint(const std::string& key, uint64_t fallback) const {
    const GgufValue* v = find(key);
    return v && (v->is_integer() || v->is_bool()) ? v->as_uint() : fallback;
}
double GgufFile::get_float(const std::string& key, double fallback) const {
    const GgufValue* v = find(key);
    return v && (v->is_float() || v->is_integer()) ? v->as_float() : fallback;
}
bool GgufFile::get_bool(const std::string& key, bool fallback) const {
    const GgufValue* v = find(key);
    return v && v->is_bool() ? v->as_int() != 0 : fallback;
}
std::string GgufFile::get_string(const std::string& key, const std::string& fallback) const {
    const GgufValue* v = find(key);
    return v && v->is_string() ? v->as_string() : fallback;
}

Result<uint64_t> GgufFile::require_uint(const std::string& key) const {
    const GgufValue* v = find(key);
    if (!v) return Status::error("{}: required key {} is missing", path_, key);
    if (!v->is_integer()) {
        return Status::error("{}: key {}: expected an integer, got {}", path_, key, gguf_value_type_name(v->type));
    }
    if (v->type == GgufValueType::I8 || v->type == GgufValueType::I16 || v->type == GgufValueType::I32 ||
        v->type == GgufValueType::I64) {
        if (v->as_int() < 0) return Status::error("{}: key {}: expected a non-negative integer, got {}", path_, key, v->as_int());
    }
    return v->as_uint();
}
Result<double> GgufFile::require_float(const std::string& key) const {
    const GgufValue* v = find(key);
    if (!v) return Status::error("{}: required key {} is missing", path_, key);
    if (!v->is_float() && !v->is_integer()) {
        return Status::error("{}: key {}: expected a number, got {}", path_, key, gguf_value_type_name(v->type));
    }
    return v->as_float();
}
Result<std::string> GgufFile::require_string(const std::string& key) const {
    const GgufValue* v = find(key);
    if (!v) return Status::error("{}: required key {} is missing", path_, key);
    if (!v->is_string()) {
        return Status::error("{}: key {}: expected a string, got {}", path_, key, gguf_value_type_name(v->type));
    }
    return v->as_string();
}

const GgufTensorInfo* GgufFile::tensor(const std::string& name) const {
    auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const uint8_t* GgufFile::tensor_data(const GgufTensorInfo& info) const {
    STRATA_CHECK(info.file_index < parts_.size(), "tensor info from another GgufFile");
    return parts_[info.file_index]->data + info.offset;
}

}  // namespace strata
