#pragma once
// Generated text on its way to a client, a token's piece at a time: text that could still turn
// out to be the start of a stop string, or that ends in the middle of a UTF-8 character, is held
// back until the next pieces decide it. Used by generate() and, step by step, by the server's
// scheduler, which interleaves the decode steps of several requests.
//
//   StopStringStreamer s({"\n\n"});
//   std::string ready = s.push(piece);    // safe to send now
//   if (s.stopped()) ...                  // a stop string was reached; the text ends before it
//   std::string rest = s.finish();        // at the end: what was held back

#include <string>
#include <string_view>
#include <vector>

namespace strata {

class StopStringStreamer {
public:
    explicit StopStringStreamer(std::vector<std::string> stops) : stops_(std::move(stops)) {}

    std::string push(std::string_view piece);
    std::string finish();
    bool stopped() const { return stopped_; }
    // The stop string that ended the text (empty until stopped()): the earliest match, and of
    // those starting there the first listed.
    const std::string& matched() const { return matched_; }
    const std::string& text() const { return text_; }  // everything accepted (cut at a stop string)

private:
    std::vector<std::string> stops_;
    std::string text_;
    size_t emitted_ = 0;
    bool stopped_ = false;
    std::string matched_;
};

}  // namespace strata
