#include "tokenizer/tool_calls/tool_call_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace strata::tool_calls {
namespace {

// gpt-oss harmony tokens. A generation is a sequence of messages
//   [<|start|>assistant][ to=R]<|channel|>C[ to=R][ <|constrain|>json]<|message|>BODY<|end|>
// where C is analysis (reasoning), final (the answer) or commentary (a call when R is set, else
// a preamble for the user); a call's body ends with <|call|>, the last answer with <|return|>.
constexpr std::string_view kHMessage = "<|message|>";
constexpr std::array<std::string_view, 3> kHBodyEnds = {"<|end|>", "<|call|>", "<|return|>"};
// A body also ends where the next header starts, should the model skip <|end|>.
constexpr std::array<std::string_view, 5> kHBodyStops = {"<|end|>", "<|call|>", "<|return|>", "<|start|>",
                                                         "<|channel|>"};

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The word after `key` in a harmony header, up to a space or the next special token.
std::string header_field(std::string_view header, std::string_view key) {
    size_t at = header.find(key);
    if (at == kNpos) return {};
    std::string_view rest = header.substr(at + key.size());
    size_t end = 0;
    while (end < rest.size() && !is_space(rest[end]) && rest[end] != '<') ++end;
    return std::string(rest.substr(0, end));
}

}  // namespace

std::string make_tool_call_id(bool short_alnum, uint64_t seed, size_t index) {
    constexpr std::string_view kAlnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint64_t state = seed ^ (0xD1B54A32D192ED03ull * (index + 1));
    std::string id = short_alnum ? "" : "call_";
    size_t n = short_alnum ? 9 : 24;
    for (size_t i = 0; i < n; ++i) id += kAlnum[splitmix64(state) % kAlnum.size()];
    return id;
}

ToolCallParser::ToolCallParser(ParserOptions options)
    : options_(std::move(options)), syntax_(format_syntax(options_.format)), schemas_(options_.tools) {
    if (options_.parse_tool_calls) {
        for (const CallSyntax& c : syntax_.calls) {
            content_markers_.push_back(c.open);
            call_for_marker_.push_back(&c);
        }
        for (std::string_view g : syntax_.group_markers) {
            content_markers_.push_back(g);
            call_for_marker_.push_back(nullptr);
        }
    }
    if (options_.format == ChatFormat::GptOss) {
        state_ = State::HarmonyHeader;
    } else if (options_.thinking_forced_open && !syntax_.think_open.empty()) {
        // Kept in content, the reasoning still gets its opening tag so the content is
        // well-formed for clients that look for <think>…</think>.
        enter_reasoning(syntax_.think_open);
    }
}

MessageDelta ToolCallParser::take_delta() {
    MessageDelta d = std::move(delta_);
    delta_ = MessageDelta{};
    return d;
}

MessageDelta ToolCallParser::feed(std::string_view text) {
    if (finished_) return {};
    pending_.append(text);
    while (step(false)) {
    }
    return take_delta();
}

ToolCallParser::Finished ToolCallParser::finish() {
    if (!finished_) {
        finished_ = true;
        while (step(true)) {
        }
        pending_.clear();  // whitespace at the start, or a header that never got a body
    }
    return Finished{take_delta(), message_};
}

ParsedMessage ToolCallParser::parse(std::string_view text, ParserOptions options) {
    ToolCallParser parser(std::move(options));
    parser.feed(text);
    return parser.finish().message;
}

bool ToolCallParser::step(bool at_end) {
    switch (state_) {
        case State::Start: return step_start(at_end, false);
        case State::AfterJsonCall: return step_start(at_end, true);
        case State::Reasoning: return step_reasoning(at_end);
        case State::Content: return step_content(at_end);
        case State::Block: return step_block(at_end);
        case State::HarmonyHeader: return step_harmony_header(at_end);
        case State::HarmonyBody: return step_harmony_body(at_end);
    }
    return false;
}

// The start of the output decides two things before any content is released: whether reasoning
// opens (only there: a <think> later in an answer is text the model is talking about), and for
// Llama 3.x whether the answer is a bare JSON call.
bool ToolCallParser::step_start(bool at_end, bool after_call) {
    size_t i = 0;
    // Between bare JSON calls Llama may write ';' separators.
    while (i < pending_.size() && (is_space(pending_[i]) || (after_call && pending_[i] == ';'))) ++i;
    if (i == pending_.size()) {
        if (at_end) pending_.clear();
        return false;
    }
    std::string_view rest = std::string_view(pending_).substr(i);
    std::string_view open = syntax_.think_open;
    if (!after_call && !open.empty()) {
        if (starts_with(rest, open)) {
            consume(i + open.size());
            enter_reasoning(open);
            return true;
        }
        if (!at_end && starts_with(open, rest)) return false;
    }
    if (syntax_.json_call_at_start && options_.parse_tool_calls && rest.front() == '{') {
        consume(i);
        begin_block(syntax_.json_call_at_start, "");
        return true;
    }
    if (after_call) consume(i);  // the separators belong to no stream
    state_ = State::Content;
    return true;
}

void ToolCallParser::enter_reasoning(std::string_view open_marker) {
    if (!options_.split_reasoning) emit_content(open_marker);
    state_ = State::Reasoning;
}

bool ToolCallParser::step_reasoning(bool at_end) {
    std::string_view close = syntax_.think_close;
    size_t pos = pending_.find(close);
    if (pos != kNpos) {
        emit_reasoning(std::string_view(pending_).substr(0, pos));
        if (!options_.split_reasoning) emit_content(close);
        consume(pos + close.size());
        state_ = State::Content;
        return true;
    }
    size_t n = at_end ? pending_.size() : releasable_prefix(pending_, {close});
    emit_reasoning(std::string_view(pending_).substr(0, n));
    consume(n);
    return n > 0;
}

bool ToolCallParser::step_content(bool at_end) {
    MarkerHit hit = find_first_marker(pending_, content_markers_);
    if (hit.pos != kNpos) {
        emit_content(std::string_view(pending_).substr(0, hit.pos));
        std::string_view marker = content_markers_[hit.index];
        consume(hit.pos + marker.size());
        if (const CallSyntax* call = call_for_marker_[hit.index]) begin_block(call, marker);
        return true;
    }
    size_t n = at_end ? pending_.size() : releasable_prefix(pending_, content_markers_);
    emit_content(std::string_view(pending_).substr(0, n));
    consume(n);
    return n > 0;
}

void ToolCallParser::begin_block(const CallSyntax* call, std::string_view open_text) {
    call_ = call;
    block_open_.assign(open_text);
    body_.clear();
    body_scanned_ = 0;
    json_begin_ = kNpos;
    json_fed_ = 0;
    json_ = JsonExtent{};
    state_ = State::Block;
}

bool ToolCallParser::step_block(bool at_end) {
    body_ += pending_;
    pending_.clear();
    if (!call_->close.empty()) {
        size_t pos = body_.find(call_->close, body_scanned_);
        if (pos != kNpos) {
            pending_ = body_.substr(pos + call_->close.size());
            body_.resize(pos);
            finish_block(/*closed=*/true, /*invalid=*/false);
            return true;
        }
        // Rescanning only the tail keeps a long body linear in its length.
        body_scanned_ = body_.size() >= call_->close.size() ? body_.size() - call_->close.size() + 1 : 0;
    } else {
        if (json_begin_ == kNpos) {
            json_begin_ = json_value_start(call_->body, body_);
            json_fed_ = json_begin_ == kNpos ? 0 : json_begin_;
        }
        if (json_begin_ != kNpos) {
            json_fed_ += json_.feed(std::string_view(body_).substr(json_fed_));
            if (json_.complete() || json_.invalid()) {
                pending_ = body_.substr(json_fed_);
                body_.resize(json_fed_);
                finish_block(/*closed=*/json_.complete(), /*invalid=*/json_.invalid());
                return true;
            }
        }
    }
    if (!at_end) return false;
    finish_block(/*closed=*/false, /*invalid=*/false);
    return true;
}

void ToolCallParser::finish_block(bool closed, bool invalid) {
    const CallSyntax* call = call_;
    std::string raw = block_open_ + body_ + (closed ? std::string(call->close) : std::string());
    BodyParse parsed;
    if (invalid) {
        // The text after the opener is not the JSON a call needs. firefunction's opener is an
        // ordinary word, so there this just means the model wrote "functools" in prose.
        if (call->body == BodyKind::JsonCallArray) parsed.not_a_call = true;
        else parsed.error = fmt::format("{} is not followed by JSON arguments", trim(raw));
    } else {
        parsed = parse_call_body(call->body, body_, schemas_);
        if (parsed.error.empty() && !parsed.not_a_call && !closed && !call->close.empty() && !call->ends_at_eos) {
            parsed.notes.push_back(fmt::format("tool call {} was not closed with {}; accepted as complete",
                                               parsed.calls.empty() ? "" : parsed.calls[0].name, call->close));
        }
    }
    call_ = nullptr;
    body_.clear();
    bool was_call = parsed.error.empty() && !parsed.not_a_call;
    add_calls(parsed, raw);
    state_ = (was_call && call == syntax_.json_call_at_start) ? State::AfterJsonCall : State::Content;
}

void ToolCallParser::add_calls(BodyParse& parsed, std::string_view raw_text) {
    for (std::string& note : parsed.notes) message_.problems.push_back(std::move(note));
    if (!parsed.error.empty() || parsed.not_a_call) {
        if (!parsed.error.empty()) {
            message_.problems.push_back(parsed.error + "; the call's text is returned as content");
        }
        emit_content(raw_text);
        return;
    }
    for (ParsedCall& pc : parsed.calls) {
        size_t index = message_.tool_calls.size();
        ToolCall call;
        call.id = !pc.id.empty() ? pc.id : make_tool_call_id(syntax_.short_alnum_ids, options_.id_seed, index);
        call.name = std::move(pc.name);
        // Replace, not throw, on invalid UTF-8: a model can emit any bytes.
        call.arguments = pc.arguments.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
        delta_.tool_calls.push_back(ToolCallDelta{static_cast<int>(index), call.id, call.name, call.arguments});
        message_.tool_calls.push_back(std::move(call));
    }
}

void ToolCallParser::emit_content(std::string_view text) {
    std::string out = content_stream_.push(text);
    delta_.content += out;
    message_.content += out;
}

void ToolCallParser::emit_reasoning(std::string_view text) {
    if (!options_.split_reasoning) {
        emit_content(text);
        return;
    }
    std::string out = reasoning_stream_.push(text);
    delta_.reasoning_content += out;
    message_.reasoning_content += out;
}

bool ToolCallParser::step_harmony_header(bool at_end) {
    size_t i = 0;
    while (i < pending_.size() && is_space(pending_[i])) ++i;
    std::string_view rest = std::string_view(pending_).substr(i);
    if (rest.empty()) {
        if (at_end) pending_.clear();
        return false;
    }
    // Text that cannot begin a header is a plain answer without channel framing.
    bool header_like = starts_with(rest, "<|") || starts_with(rest, "to=") ||
                       (!at_end && (starts_with("<|", rest) || starts_with("to=", rest)));
    if (!header_like) {
        channel_ = Channel::Content;
        state_ = State::HarmonyBody;
        return true;
    }
    size_t end = pending_.find(kHMessage);
    if (end == kNpos) return false;
    std::string_view header = std::string_view(pending_).substr(0, end);
    std::string channel = header_field(header, "<|channel|>");
    std::string recipient = header_field(header, "to=");
    if (channel == "analysis") {
        channel_ = Channel::Reasoning;
        if (!options_.split_reasoning) emit_content("<think>");
    } else if (!recipient.empty() && options_.parse_tool_calls) {
        channel_ = Channel::Call;
        harmony_call_name_ = starts_with(recipient, "functions.") ? recipient.substr(10) : recipient;
        block_open_.assign(pending_, 0, end + kHMessage.size());
        body_.clear();
    } else {
        channel_ = Channel::Content;  // final, or a commentary preamble addressed to the user
    }
    consume(end + kHMessage.size());
    state_ = State::HarmonyBody;
    return true;
}

bool ToolCallParser::step_harmony_body(bool at_end) {
    MarkerHit hit = find_first_marker(pending_, kHBodyStops);
    size_t n = hit.pos != kNpos ? hit.pos : at_end ? pending_.size() : releasable_prefix(pending_, kHBodyStops);
    std::string_view text = std::string_view(pending_).substr(0, n);
    if (channel_ == Channel::Call) body_.append(text);
    else if (channel_ == Channel::Reasoning) emit_reasoning(text);
    else emit_content(text);
    consume(n);
    bool ended = hit.pos != kNpos || at_end;
    if (!ended) return n > 0;
    std::string_view stop = hit.pos != kNpos ? kHBodyStops[hit.index] : std::string_view();
    bool is_end_token = std::find(kHBodyEnds.begin(), kHBodyEnds.end(), stop) != kHBodyEnds.end();
    if (is_end_token) consume(stop.size());  // a header start stays for the next message
    if (channel_ == Channel::Reasoning && !options_.split_reasoning) emit_content("</think>");
    if (channel_ == Channel::Call) {
        // The server usually stops on <|call|> and strips it, so a call that simply ends with
        // the output is complete.
        BodyParse parsed = parse_named_json_call(harmony_call_name_, body_);
        add_calls(parsed, block_open_ + body_ + std::string(is_end_token ? stop : ""));
        body_.clear();
    }
    state_ = State::HarmonyHeader;
    return true;
}

}  // namespace strata::tool_calls
