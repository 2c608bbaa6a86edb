#include "model/safetensors.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "core/file.h"
#include "core/fp16.h"

namespace strata {

Status read_safetensors(const std::string& path, std::map<std::string, SafetensorsTensor>& out) {
    STRATA_ASSIGN_OR_RETURN(std::string bytes, read_file_to_string(path));
    uint64_t header_len = 0;
    if (bytes.size() < 8) return Status::error("{}: expected a safetensors file, got {} bytes", path, bytes.size());
    std::memcpy(&header_len, bytes.data(), 8);  // little-endian on every machine Strata builds for
    if (header_len > bytes.size() - 8) {
        return Status::error("{}: header length {} runs past the end of the file ({} bytes) — not a safetensors file?",
                             path, header_len, bytes.size());
    }
    nlohmann::json header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + int64_t(header_len), nullptr,
                                                  /*allow_exceptions=*/false);
    if (!header.is_object()) return Status::error("{}: the JSON header does not parse as an object", path);
    const uint64_t data_start = 8 + header_len, data_size = bytes.size() - data_start;

    for (const auto& [name, info] : header.items()) {
        if (name == "__metadata__") continue;
        if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") || !info.contains("data_offsets")) {
            return Status::error("{}: tensor {}: expected dtype, shape and data_offsets in the header", path, name);
        }
        const std::string dtype = info["dtype"].is_string() ? info["dtype"].get<std::string>() : "";
        const size_t elem = dtype == "F32" ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
        if (elem == 0) return Status::error("{}: tensor {}: expected dtype F32, F16 or BF16, got {}", path, name, dtype);
        SafetensorsTensor t;
        uint64_t count = 1;
        for (const auto& d : info["shape"]) {
            if (!d.is_number_unsigned()) return Status::error("{}: tensor {}: shape holds a non-size", path, name);
            t.shape.push_back(d.get<int64_t>());
            count *= d.get<uint64_t>();
        }
        const auto& offsets = info["data_offsets"];
        if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
            !offsets[1].is_number_unsigned()) {
            return Status::error("{}: tensor {}: data_offsets must be two sizes", path, name);
        }
        const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
        if (end < begin || end > data_size || end - begin != count * elem) {
            return Status::error("{}: tensor {}: data_offsets [{}, {}) do not hold {} {} values within {} data bytes",
                                 path, name, begin, end, count, dtype, data_size);
        }
        const char* src = bytes.data() + data_start + begin;
        t.values.resize(count);
        for (uint64_t i = 0; i < count; ++i) {
            if (elem == 4) {
                std::memcpy(&t.values[i], src + 4 * i, 4);
            } else {
                uint16_t h;
                std::memcpy(&h, src + 2 * i, 2);
                t.values[i] = dtype == "F16" ? fp16_to_fp32(h) : bf16_to_fp32(h);
            }
        }
        if (!out.emplace(name, std::move(t)).second) {
            return Status::error("{}: tensor {} is also in another checkpoint file", path, name);
        }
    }
    return Status::ok();
}

}  // namespace strata
