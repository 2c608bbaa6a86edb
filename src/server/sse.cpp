#include "server/sse.h"

namespace strata::server {

std::string sse_event(const nlohmann::json& data) {
    // dump() escapes control characters, so the JSON never contains a raw newline that would
    // end the event early.
    return "data: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

std::string sse_done() { return "data: [DONE]\n\n"; }

std::string sse_comment(std::string_view text) { return ": " + std::string(text) + "\n\n"; }

std::string sse_named_event(const nlohmann::json& data) {
    return "event: " + data.at("type").get<std::string>() + "\n" + sse_event(data);
}

std::optional<std::vector<std::string>> parse_sse(std::string_view stream) {
    auto events = parse_sse_events(stream);
    if (!events) return std::nullopt;
    std::vector<std::string> data;
    for (auto& e : *events) data.push_back(std::move(e.data));
    return data;
}

std::optional<std::vector<SseEvent>> parse_sse_events(std::string_view stream) {
    std::vector<SseEvent> events;
    std::string name;
    std::string data;
    bool has_data = false;
    size_t pos = 0;
    while (pos < stream.size()) {
        const size_t eol = stream.find('\n', pos);
        if (eol == std::string_view::npos) return std::nullopt;  // a line without its end
        std::string_view line = stream.substr(pos, eol - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        pos = eol + 1;
        if (line.empty()) {  // blank line: the event ends
            if (has_data) events.push_back(SseEvent{std::move(name), std::move(data)});
            name.clear();
            data.clear();
            has_data = false;
        } else if (line.front() == ':') {
            continue;
        } else if (line.rfind("data:", 0) == 0) {
            std::string_view value = line.substr(5);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
            if (has_data) data += '\n';
            data += value;
            has_data = true;
        } else if (line.rfind("event:", 0) == 0) {
            std::string_view value = line.substr(6);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
            name = value;
        }
        // Other fields (id:, retry:) are not used by either stream.
    }
    if (has_data) return std::nullopt;  // the last event was not terminated
    return events;
}

}  // namespace strata::server
