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
// A long conversation read cold (a restarted server, a client's first request) has hundreds of
// turns; each checkpoint costs a copy of the state and cuts a prompt chunk short, so at most
// `limit` are returned: the first (after the system prompt, which other conversations share) and
// the last ones (those the next turns resume from; templates that drop the thinking of every
// reply since the last user message move the divergence back a few turns).
//
//   std::vector<int64_t> at = turn_starts(prompt, history, [&](int32_t t) { return tok.is_control(t); }, 8);

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace strata::server {

// Ascending positions in (0, prompt.size()), at most `limit` (>= 1) of them; empty when `history`
// is not a proper prefix of `prompt` (a template whose generation prompt changes what comes
// before it).
std::vector<int64_t> turn_starts(std::span<const int32_t> prompt, std::span<const int32_t> history,
                                 const std::function<bool(int32_t)>& is_control, size_t limit);

}  // namespace strata::server
