#pragma once
// Where a chat prompt's turns start, in tokens: the positions at which the scheduler keeps turn
// checkpoints of a hybrid model (server/checkpoint_cache.h). A coding agent's next prompt repeats
// the conversation so far and diverges from what the server read last time inside the previous
// reply (the template renders it anew: thinking dropped, a tool call written in its own syntax),
// so the useful resumption points are the starts of messages, before their role markers.
//
// They are found from the template itself, whatever its syntax: the prompt rendered without the
// generation prompt (`history`) is, token for token, the prompt minus the generation prompt, whose
// start is the start of the reply's turn; the generation prompt's first token is the template's
// turn marker (<|im_start|>, <|start_header_id|>, <start_of_turn>, <|start|>, ...), and when it is
// a control token, which text cannot spell, its every occurrence starts a message.
//
//   std::vector<int64_t> at = turn_starts(prompt, history, [&](int32_t t) { return tok.is_control(t); });

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace strata::server {

// Ascending positions in (0, prompt.size()); empty when `history` is not a proper prefix of
// `prompt` (a template whose generation prompt changes what comes before it).
std::vector<int64_t> turn_starts(std::span<const int32_t> prompt, std::span<const int32_t> history,
                                 const std::function<bool(int32_t)>& is_control);

}  // namespace strata::server
