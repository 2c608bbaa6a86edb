#pragma once
// Turn checkpoints of hybrid models (DeltaNet layers, conv tails, PLE histories): the recurrent
// state of a scheduler slot saved at chosen positions of its tokens, so that a later prompt that
// shares the slot's tokens up to such a position, but not further, resumes there instead of
// re-reading the prompt from its first token (a recurrent state cannot be rewound).
//
// A checkpoint holds the recurrent state only. The attention layers' KV rows before its position
// stay in the slot's cache, where they already are: copying them into every checkpoint would cost
// the rows of the whole prefix per checkpoint (a conversation's checkpoints would grow with the
// square of its length, against the state's fixed size), and a GPU cache's rows live in VRAM. So a
// checkpoint is keyed by (slot, position), which names a token prefix: the slot's first `position`
// tokens. It can be restored only into its own slot, and only while that slot still holds those
// tokens; the scheduler drops a slot's checkpoints past the point where a new prompt diverges from
// what the slot held (drop_after), since the new tokens overwrite those rows.
//
// The cache is bounded by a byte budget over all slots; the least recently used checkpoint goes
// first. Only the engine thread changes it; stats() may be read from any thread.
//
//   CheckpointCache cache(4ull << 30);
//   cache.put(slot, session.checkpoint());                    // after position n of slot
//   int64_t at = cache.best(slot, limit);                     // latest checkpoint <= limit, or 0
//   session.restore_checkpoint(*cache.take(slot, at));        // then read only the rest
//   cache.drop_after(slot, common);                           // a new prompt diverges at `common`

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "kv/recurrent_state.h"

namespace strata::server {

struct CheckpointStats {
    uint64_t hits = 0;     // admissions that restored a checkpoint
    uint64_t misses = 0;   // admissions that shared more with a free slot than it kept, and restored none
    uint64_t stored = 0;   // checkpoints kept
    uint64_t evicted = 0;  // dropped for the budget (least recently used first)
    uint64_t dropped = 0;  // dropped because their slot's tokens were replaced
    uint64_t refused = 0;  // larger than the whole budget: not kept
    uint64_t bytes = 0;    // held now
    uint64_t budget_bytes = 0;
    int64_t entries = 0;   // held now
};

class CheckpointCache {
public:
    explicit CheckpointCache(uint64_t budget_bytes) { stats_.budget_bytes = budget_bytes; }
    CheckpointCache(const CheckpointCache&) = delete;
    CheckpointCache& operator=(const CheckpointCache&) = delete;

    // 0 bytes: checkpoints are off.
    bool enabled() const { return stats_.budget_bytes > 0; }

    // Keeps `snapshot` as slot `slot`'s state after its first snapshot.n_past tokens, replacing
    // one at that position, and evicts the least recently used checkpoints (of any slot) until
    // the budget holds. False, keeping nothing, when the snapshot alone is over the budget.
    bool put(int slot, RecurrentSnapshot snapshot);
    // The position of slot's latest checkpoint at or before `limit`; 0 when it has none.
    int64_t best(int slot, int64_t limit) const;
    // The checkpoint of slot at position n_past, marked most recently used; nullptr when there is
    // none. Valid until the next put or drop.
    const RecurrentSnapshot* take(int slot, int64_t n_past);
    // Forgets slot's checkpoints past position n: its tokens from n on are being replaced.
    void drop_after(int slot, int64_t n);

    void count_hit();
    void count_miss();
    CheckpointStats stats() const;

private:
    struct Entry {
        RecurrentSnapshot snapshot;
        uint64_t last_used = 0;
    };
    using Key = std::pair<int, int64_t>;  // (slot, position)
    void erase(std::map<Key, Entry>::iterator it);  // under mutex_

    mutable std::mutex mutex_;
    std::map<Key, Entry> entries_;
    uint64_t clock_ = 0;
    CheckpointStats stats_;
};

}  // namespace strata::server
