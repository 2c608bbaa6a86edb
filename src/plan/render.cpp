#include "plan/render.h"

#include <algorithm>
#include <numeric>

#include "plan/layer_split.h"
#include "plan/units.h"

namespace strata {

namespace {

struct SegmentStyle {
    const char* key;
    char glyph;         // terminal
    const char* color;  // SVG
};
constexpr SegmentStyle kStyles[] = {
    {"dense", 'D', "#4e79a7"},   {"kv", 'K', "#f28e2b"},      {"workspace", 'W', "#e15759"},
    {"experts", 'E', "#59a14f"}, {"reserve", 'R', "#9c755f"}, {"free", '.', "#e6e6e6"},
    {"ngram", 'N', "#b07aa1"},
};

const SegmentStyle& style_of(const std::string& key) {
    for (const SegmentStyle& s : kStyles) {
        if (key == s.key) return s;
    }
    return kStyles[5];  // "free"
}

uint64_t sum_bytes(const std::vector<MemorySegment>& segs) {
    uint64_t total = 0;
    for (const auto& s : segs) total += s.bytes;
    return total;
}

// A memory drawn as one bar: the one GPU's VRAM, a GPU of a layer split, or the host's RAM.
struct Bar {
    std::string title;    // "VRAM", "GPU 1", "RAM"
    std::string caption;  // after the size: "RTX 3090, layers 24–47" (a split's GPU)
    uint64_t capacity = 0;
    std::vector<MemorySegment> segments;
    uint64_t experts_held = 0, experts_of = 0;  // for the legend of the expert segment
};

std::vector<MemorySegment> share_segments(const GpuShare& s, uint64_t slot_bytes) {
    return {{"dense", "dense weights", s.dense},
            {"kv", "KV cache", s.context},
            {"workspace", "workspaces", s.workspace.total()},
            {"experts", "expert slots", s.expert_slots * slot_bytes},
            {"reserve", "reserve", s.reserve},
            {"free", "unused", s.unused}};
}

// The VRAM bars (one per GPU of a split, one for a single GPU, none without) and the RAM bar.
std::vector<Bar> bars_of(const Plan& plan) {
    std::vector<Bar> bars;
    for (size_t i = 0; i < plan.gpu_shares.size(); ++i) {
        const GpuShare& s = plan.gpu_shares[i];
        bars.push_back({fmt::format("GPU {}", i), s.name.empty() ? share_layers(s) : s.name + ", " + share_layers(s),
                        s.capacity, share_segments(s, plan.expert_slot_bytes), s.expert_slots, s.expert_count});
    }
    if (plan.has_gpu && plan.gpu_shares.empty()) {
        bars.push_back({"VRAM", "", plan.vram_capacity, plan.vram_segments(), plan.vram_expert_slots,
                        plan.weights.expert_count});
    }
    bars.push_back({"RAM", "", plan.ram_capacity, plan.ram_segments(), plan.ram_arena_experts, plan.weights.expert_count});
    return bars;
}

std::string segment_detail(const Bar& bar, const MemorySegment& s) {
    if (s.key != "experts") return {};
    const double share = bar.experts_of ? static_cast<double>(bar.experts_held) / static_cast<double>(bar.experts_of) : 0;
    return fmt::format("  {} of {} experts ({:.1f}%)", bar.experts_held, bar.experts_of, share * 100.0);
}

// "needs 30.00 GiB of 24.00 GiB" when over-full, else the capacity.
std::string bar_size(const Bar& bar) {
    const uint64_t need = sum_bytes(bar.segments);
    return need > bar.capacity ? fmt::format("needs {} of {}", format_bytes(need), format_bytes(bar.capacity))
                               : format_bytes(bar.capacity);
}

// One bar with its legend. The bar spans the larger of capacity and what the segments need, so an
// over-full plan shows how far past the capacity it reaches ('|' marks the capacity).
void draw_bar(std::string& out, const Bar& b, int width) {
    std::vector<uint64_t> bytes;
    for (const auto& s : b.segments) bytes.push_back(s.bytes);
    const uint64_t need = sum_bytes(b.segments);
    const uint64_t span = std::max(need, b.capacity);
    std::vector<int> widths = bar_widths(bytes, width);
    std::string bar;
    for (size_t i = 0; i < b.segments.size(); ++i) {
        bar.append(static_cast<size_t>(widths[i]), style_of(b.segments[i].key).glyph);
    }
    if (need > b.capacity && span > 0) {
        const size_t at = static_cast<size_t>(static_cast<double>(b.capacity) / static_cast<double>(span) * width);
        bar.insert(std::min(at, bar.size()), "|");
    }
    out += fmt::format("{:<5} [{}] {}{}\n", b.title, bar, bar_size(b), b.caption.empty() ? "" : " — " + b.caption);
    for (const auto& s : b.segments) {
        if (s.bytes == 0) continue;
        out += fmt::format("        {} {:<16}{:>11}{}\n", style_of(s.key).glyph, s.label, format_bytes(s.bytes),
                           segment_detail(b, s));
    }
}

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string header_line(const Plan& plan) {
    const PlanRequest& r = plan.request;
    return fmt::format("{} ({}), context {} with {} KV, batch {}", plan.model_name, plan.arch, r.n_ctx,
                       kv_type_name(r.kv_type), r.n_batch);
}

}  // namespace

std::vector<int> bar_widths(const std::vector<uint64_t>& bytes, int width) {
    std::vector<int> w(bytes.size(), 0);
    const double total = static_cast<double>(std::accumulate(bytes.begin(), bytes.end(), uint64_t(0)));
    if (total <= 0 || width <= 0) return w;
    std::vector<double> remainder(bytes.size(), -1.0);
    int used = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] == 0) continue;
        const double ideal = static_cast<double>(bytes[i]) / total * width;
        w[i] = std::max(1, static_cast<int>(ideal));
        remainder[i] = ideal - static_cast<int>(ideal);
        used += w[i];
    }
    // Too wide (the one-character minimum): take from the widest segments.
    while (used > width) {
        auto widest = std::max_element(w.begin(), w.end());
        if (*widest <= 1) break;
        --*widest;
        --used;
    }
    // Too narrow (rounding down): one more character each to the largest remainders.
    std::vector<size_t> order;
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] > 0) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t c) { return remainder[a] > remainder[c]; });
    for (size_t k = 0; used < width && !order.empty(); k = (k + 1) % order.size()) {
        ++w[order[k]];
        ++used;
    }
    return w;
}

std::string render_plan_text(const Plan& plan, int bar_width) {
    std::string out = "strata plan: " + header_line(plan) + "\n\n";
    if (!plan.has_gpu) out += "VRAM   none: everything runs on the CPU\n";
    for (const Bar& bar : bars_of(plan)) draw_bar(out, bar, bar_width);
    if (plan.weights.expert_count > 0) {
        out += fmt::format("disk   {} of experts ({} of {}, {:.1f}%) read through the mapped file when used\n",
                           format_bytes(plan.disk_expert_bytes), plan.disk_experts, plan.weights.expert_count,
                           plan.disk_expert_share() * 100.0);
    }
    if (plan.disk_ngram_table > 0) {
        out += fmt::format("disk   {} n-gram (PLE) table: {} rows of {} read from the SSD per token\n",
                           format_bytes(plan.disk_ngram_table), plan.weights.ngram_rows_per_token,
                           format_bytes(plan.weights.ngram_row_bytes));
    }
    out += "\n";
    for (const auto& line : plan.explanation) out += "  " + line + "\n";
    out += "\n";
    for (const auto& n : plan.notes) out += "note: " + n + "\n";
    if (plan.fits) {
        out += "FITS\n";
    } else {
        out += "DOES NOT FIT\n";
        for (const auto& p : plan.problems) out += "  " + p + "\n";
        out += "what would make it fit:\n";
        for (const auto& s : plan.suggestions) out += "  - " + s + "\n";
    }
    return out;
}

std::string render_plan_svg(const Plan& plan) {
    constexpr int kWidth = 820, kBarX = 20, kBarW = 780, kBarH = 34;
    std::string body;
    int y = 30;
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"16\" font-weight=\"bold\">{}</text>\n", kBarX, y,
                        xml_escape("strata plan: " + header_line(plan)));
    y += 18;
    body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" fill=\"{}\">{}</text>\n", kBarX, y,
                        plan.fits ? "#2e7d32" : "#c62828", plan.fits ? "FITS" : "DOES NOT FIT");
    y += 16;
    auto draw = [&](const Bar& bar) {
        const std::vector<MemorySegment>& segs = bar.segments;
        const uint64_t capacity = bar.capacity;
        const uint64_t need = sum_bytes(segs);
        const double span = static_cast<double>(std::max(need, capacity));
        y += 22;
        body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{} — {}</text>\n", kBarX, y,
                            xml_escape(bar.caption.empty() ? bar.title : bar.title + " — " + bar.caption),
                            bar_size(bar));
        y += 8;
        double x = kBarX;
        for (const auto& s : segs) {
            if (s.bytes == 0 || span <= 0) continue;
            const double w = static_cast<double>(s.bytes) / span * kBarW;
            body += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" stroke=\"white\" "
                                "stroke-width=\"0.5\"><title>{}: {}</title></rect>\n",
                                x, y, w, kBarH, style_of(s.key).color, xml_escape(s.label), format_bytes(s.bytes));
            // Labels inside segments wide enough to hold them; the legend names them all.
            if (w > 7.0 * static_cast<double>(s.label.size()) + 8) {
                body += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\" fill=\"{}\">{}</text>\n", x + 4,
                                    y + kBarH / 2 + 4, s.key == "free" ? "#333" : "white", xml_escape(s.label));
            }
            x += w;
        }
        if (need > capacity && span > 0) {
            const double cx = kBarX + static_cast<double>(capacity) / span * kBarW;
            body += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#c62828\" "
                                "stroke-width=\"3\"/>\n<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" "
                                "fill=\"#c62828\">capacity</text>\n",
                                cx, y - 4, cx, y + kBarH + 4, cx + 4, y + kBarH + 14);
            y += 10;  // room for the label above the legend
        }
        y += kBarH + 6;
        for (const auto& s : segs) {
            if (s.bytes == 0) continue;
            y += 17;
            body += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", kBarX, y - 11,
                                style_of(s.key).color);
            const std::string detail = segment_detail(bar, s);  // SVG collapses its leading spaces
            body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"13\">{}: {}{}</text>\n", kBarX + 18, y,
                                xml_escape(s.label), format_bytes(s.bytes),
                                detail.empty() ? std::string() : " —" + xml_escape(detail));
        }
        y += 8;
    };
    for (const Bar& bar : bars_of(plan)) draw(bar);
    if (plan.weights.expert_count > 0) {
        y += 22;
        body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"13\">disk: {} of experts ({} of {}) read through the "
                            "mapped file when used</text>\n",
                            kBarX, y, format_bytes(plan.disk_expert_bytes), plan.disk_experts, plan.weights.expert_count);
    }
    std::vector<std::string> lines = plan.problems;
    lines.insert(lines.end(), plan.suggestions.begin(), plan.suggestions.end());
    for (const auto& l : lines) {
        // SVG text does not wrap: break long lines at spaces, about 120 characters each.
        for (size_t at = 0; at < l.size();) {
            size_t end = l.size();
            if (end - at > 120) {
                end = l.rfind(' ', at + 120);
                if (end == std::string::npos || end <= at) end = at + 120;
            }
            y += 18;
            body += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#c62828\">{}</text>\n",
                                kBarX + (at ? 12 : 0), y, xml_escape(l.substr(at, end - at)));
            at = end + (end < l.size() && l[end] == ' ' ? 1 : 0);
        }
    }
    y += 20;
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
                       "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{}</svg>\n",
                       kWidth, y, kWidth, y, body);
}

nlohmann::ordered_json plan_to_json(const Plan& p) {
    using json = nlohmann::ordered_json;
    const PlanRequest& r = p.request;
    const ModelWeights& w = p.weights;
    auto segments = [](const std::vector<MemorySegment>& segs) {
        json j = json::object();
        for (const auto& s : segs) j[s.key] = s.bytes;
        return j;
    };
    json j;
    j["model"] = p.model_name;
    j["architecture"] = p.arch;
    j["fits"] = p.fits;
    j["request"] = {{"gpu", r.gpu ? json{{"name", r.gpu->name}, {"total_bytes", r.gpu->total_bytes},
                                         {"free_bytes", r.gpu->free_bytes}}
                                  : json(nullptr)},
                    {"vram_budget", r.vram_budget}, {"vram_reserve", r.vram_reserve}, {"ram_bytes", r.ram_bytes},
                    {"ram_reserve", r.ram_reserve}, {"ctx", r.n_ctx}, {"kv_type", kv_type_name(r.kv_type)},
                    {"batch", r.n_batch}};
    if (!r.split_gpus.empty()) {
        json gpus = json::array();
        for (const DeviceMemory& g : r.split_gpus) {
            gpus.push_back({{"name", g.name}, {"total_bytes", g.total_bytes}, {"free_bytes", g.free_bytes}});
        }
        j["request"]["split_gpus"] = gpus;
        j["request"]["split_at"] = r.split_at;
        j["request"]["split"] = r.split_tensor ? "tensor" : "layer";
    }
    j["weights"] = {{"total_bytes", w.total_bytes}, {"dense_bytes", w.dense_bytes},
                    {"embedding_bytes", w.embedding_bytes}, {"embedding_is_output", w.embedding_is_output},
                    {"expert_bytes", w.expert_bytes}, {"moe_layers", w.moe_layers},
                    {"experts_per_layer", w.experts_per_layer}, {"expert_count", w.expert_count},
                    {"expert_slot_bytes", w.expert_slot_bytes}, {"bytes_per_token", w.bytes_per_token},
                    {"expert_bytes_per_token", w.expert_bytes_per_token},
                    {"ngram_table_bytes", w.ngram_table_bytes}, {"ngram_row_bytes", w.ngram_row_bytes},
                    {"ngram_rows_per_token", w.ngram_rows_per_token}};
    j["context"] = {{"attention_layers", p.context.attention_layers}, {"recurrent_layers", p.context.recurrent_layers},
                    {"kv_bytes_per_token", p.context.kv_bytes_per_token}, {"kv_bytes", p.context.kv_bytes},
                    {"recurrent_bytes", p.context.recurrent_bytes}};
    if (p.has_gpu) {
        const Workspace& ws = p.vram_workspace;
        j["vram"] = {{"capacity", p.vram_capacity},
                     {"segments", segments(p.vram_segments())},
                     {"workspace", {{"activations", ws.activations}, {"attention", ws.attention}, {"ffn", ws.ffn},
                                    {"logits", ws.logits}, {"expert_staging", ws.expert_staging}}},
                     {"expert_slots", p.vram_expert_slots},
                     {"expert_share", p.vram_expert_share()},
                     {"shortfall", p.vram_shortfall}};
    } else {
        j["vram"] = nullptr;
    }
    // A layer split: each GPU's share (empty for one GPU or none); "vram" above holds the sums.
    j["gpus"] = json::array();
    for (const GpuShare& s : p.gpu_shares) {
        const Workspace& ws = s.workspace;
        j["gpus"].push_back({{"name", s.name}, {"layer_begin", s.layer_begin}, {"layer_end", s.layer_end},
                             {"capacity", s.capacity}, {"dense", s.dense}, {"context", s.context},
                             {"workspace", {{"activations", ws.activations}, {"attention", ws.attention},
                                            {"ffn", ws.ffn}, {"logits", ws.logits},
                                            {"expert_staging", ws.expert_staging}, {"total", ws.total()}}},
                             {"reserve", s.reserve}, {"expert_count", s.expert_count},
                             {"expert_slots", s.expert_slots}, {"unused", s.unused}, {"shortfall", s.shortfall}});
    }
    j["ram"] = {{"capacity", p.ram_capacity},
                {"segments", segments(p.ram_segments())},
                {"arena_experts", p.ram_arena_experts},
                {"expert_share", p.ram_expert_share()},
                {"shortfall", p.ram_shortfall}};
    j["disk"] = {{"experts", p.disk_experts}, {"expert_bytes", p.disk_expert_bytes},
                 {"expert_share", p.disk_expert_share()}, {"ngram_table_bytes", p.disk_ngram_table}};
    j["problems"] = p.problems;
    j["suggestions"] = p.suggestions;
    j["notes"] = p.notes;
    j["explanation"] = p.explanation;
    return j;
}

}  // namespace strata
