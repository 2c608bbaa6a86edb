#include "gguf/writer.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/file.h"

namespace strata {

namespace {

// Serializes into a byte vector; the header is small, so it is built in memory first.
class ByteSink {
public:
    template <typename T>
    void put(T v) {
        append(&v, sizeof(T));
    }
    void put_string(const std::string& s) {
        put<uint64_t>(s.size());
        append(s.data(), s.size());
    }
    // resize + memcpy rather than vector::insert: GCC 12 reports a false stringop-overflow there.
    void append(const void* src, size_t n) {
        if (n == 0) return;
        size_t at = bytes.size();
        bytes.resize(at + n);
        std::memcpy(bytes.data() + at, src, n);
    }
    void put_value(const GgufValue& v) {
        switch (v.type) {
            case GgufValueType::U8: put<uint8_t>(static_cast<uint8_t>(v.as_int())); break;
            case GgufValueType::I8: put<int8_t>(static_cast<int8_t>(v.as_int())); break;
            case GgufValueType::U16: put<uint16_t>(static_cast<uint16_t>(v.as_int())); break;
            case GgufValueType::I16: put<int16_t>(static_cast<int16_t>(v.as_int())); break;
            case GgufValueType::U32: put<uint32_t>(static_cast<uint32_t>(v.as_int())); break;
            case GgufValueType::I32: put<int32_t>(static_cast<int32_t>(v.as_int())); break;
            case GgufValueType::U64: put<uint64_t>(v.as_uint()); break;
            case GgufValueType::I64: put<int64_t>(v.as_int()); break;
            case GgufValueType::F32: put<float>(static_cast<float>(v.as_float())); break;
            case GgufValueType::F64: put<double>(v.as_float()); break;
            case GgufValueType::BOOL: put<uint8_t>(v.as_int() ? 1 : 0); break;
            case GgufValueType::STRING: put_string(v.as_string()); break;
            case GgufValueType::ARRAY: {
                const GgufArray& a = v.as_array();
                put<uint32_t>(static_cast<uint32_t>(a.element_type));
                put<uint64_t>(a.items.size());
                for (const auto& item : a.items) put_value(item);
                break;
            }
        }
    }
    void pad_to(uint64_t alignment) {
        while (bytes.size() % alignment) bytes.push_back(0);
    }
    std::vector<uint8_t> bytes;
};

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

void GgufWriter::set(const std::string& key, GgufValue value) {
    for (auto& [k, v] : metadata_) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    metadata_.emplace_back(key, std::move(value));
}

void GgufWriter::set_string_array(const std::string& key, const std::vector<std::string>& v) {
    std::vector<GgufValue> items;
    items.reserve(v.size());
    for (const auto& s : v) items.push_back(GgufValue::make_string(s));
    set(key, GgufValue::make_array(GgufValueType::STRING, std::move(items)));
}

void GgufWriter::set_i32_array(const std::string& key, const std::vector<int32_t>& v) {
    std::vector<GgufValue> items;
    items.reserve(v.size());
    for (int32_t x : v) items.push_back(GgufValue::make_int(GgufValueType::I32, x));
    set(key, GgufValue::make_array(GgufValueType::I32, std::move(items)));
}

void GgufWriter::set_f32_array(const std::string& key, const std::vector<float>& v) {
    std::vector<GgufValue> items;
    items.reserve(v.size());
    for (float x : v) items.push_back(GgufValue::make_float(GgufValueType::F32, x));
    set(key, GgufValue::make_array(GgufValueType::F32, std::move(items)));
}

Status GgufWriter::set_alignment(uint32_t alignment) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        return Status::error("GGUF alignment: expected a power of two, got {}", alignment);
    }
    alignment_ = alignment;
    if (alignment != 32) set_u32("general.alignment", alignment);
    return Status::ok();
}

Result<uint64_t> GgufWriter::check_tensor(const std::string& name, TensorType type,
                                          const std::vector<uint64_t>& ne) const {
    const TensorTypeInfo* info = tensor_type_info(type);
    if (!info) return Status::error("tensor {}: unknown type id {}", name, static_cast<uint32_t>(type));
    if (ne.empty() || ne.size() > 4) return Status::error("tensor {}: expected 1 to 4 dimensions, got {}", name, ne.size());
    if (!info->row_fits(ne[0])) {
        return Status::error("tensor {}: expected a row length that is a multiple of {} for {}, got {}", name,
                             info->block_size, info->name, ne[0]);
    }
    for (const auto& t : tensors_) {
        if (t.name == name) return Status::error("tensor {}: added twice", name);
    }
    uint64_t rows = 1;
    for (size_t i = 1; i < ne.size(); ++i) rows *= ne[i];
    return info->row_bytes(ne[0]) * rows;
}

Status GgufWriter::add_tensor(const std::string& name, TensorType type, const std::vector<uint64_t>& ne,
                              std::vector<uint8_t> data) {
    STRATA_ASSIGN_OR_RETURN(uint64_t n_bytes, check_tensor(name, type, ne));
    if (data.size() != n_bytes) {
        return Status::error("tensor {}: expected {} bytes of {} data for shape {}, got {}", name, n_bytes,
                             tensor_type_name(type), ne.size(), data.size());
    }
    tensors_.push_back({name, type, ne, n_bytes, std::move(data), nullptr});
    return Status::ok();
}

Status GgufWriter::add_tensor_generator(const std::string& name, TensorType type, const std::vector<uint64_t>& ne,
                                        Generator generate) {
    STRATA_ASSIGN_OR_RETURN(uint64_t n_bytes, check_tensor(name, type, ne));
    tensors_.push_back({name, type, ne, n_bytes, {}, std::move(generate)});
    return Status::ok();
}

Status GgufWriter::write(const std::string& path) const {
    ByteSink header;
    header.put<uint32_t>(0x46554747);  // "GGUF"
    header.put<uint32_t>(3);
    header.put<uint64_t>(tensors_.size());
    header.put<uint64_t>(metadata_.size());
    for (const auto& [key, value] : metadata_) {
        header.put_string(key);
        header.put<uint32_t>(static_cast<uint32_t>(value.type));
        header.put_value(value);
    }
    uint64_t offset = 0;
    for (const auto& t : tensors_) {
        header.put_string(t.name);
        header.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
        for (uint64_t d : t.ne) header.put<uint64_t>(d);
        header.put<uint32_t>(static_cast<uint32_t>(t.type));
        header.put<uint64_t>(offset);
        offset = align_up(offset + t.n_bytes, alignment_);
    }
    header.pad_to(alignment_);

    STRATA_ASSIGN_OR_RETURN(File out, File::create(path));
    STRATA_TRY(out.write(header.bytes.data(), header.bytes.size()));
    static const uint8_t kZeros[256] = {};
    std::vector<uint8_t> generated;
    for (const auto& t : tensors_) {
        if (t.generate) {
            // Generated tensors are produced in pieces of whole rows, up to 64 MiB, so memory
            // stays flat for huge files and generators can work row by row.
            const uint64_t row = tensor_type_info(t.type)->row_bytes(t.ne[0]);
            const uint64_t piece = row == 0 ? t.n_bytes : std::max(row, (uint64_t(64) << 20) / row * row);
            for (uint64_t done = 0; done < t.n_bytes; done += piece) {
                uint64_t n = std::min(piece, t.n_bytes - done);
                generated.resize(static_cast<size_t>(n));
                t.generate(generated.data(), n);
                STRATA_TRY(out.write(generated.data(), n));
            }
        } else if (t.n_bytes > 0) {
            STRATA_TRY(out.write(t.data.data(), t.n_bytes));
        }
        uint64_t pad = align_up(t.n_bytes, alignment_) - t.n_bytes;
        while (pad > 0) {
            uint64_t n = std::min<uint64_t>(pad, sizeof(kZeros));
            STRATA_TRY(out.write(kZeros, n));
            pad -= n;
        }
    }
    return out.close();
}

}  // namespace strata
