// What a slot keeps of its previous requests for the next one (scheduler.h): the KV rows of the
// prefix it shares with the new prompt, and on hybrid models the recurrent state to resume from,
// live or from a turn checkpoint (server/checkpoint_cache.h); and the checkpoints taken as a
// prompt is read and as a reply ends.
#include <algorithm>

#include "server/scheduler.h"
#include "server/scheduler_slot.h"

namespace strata::server {

Scheduler::Reuse Scheduler::reuse_offer(const Slot& slot, const TaskSpec& task) const {
    const std::vector<int32_t>& prompt = task.prompt;
    Reuse r;
    const auto& have = slot.session.tokens();
    const size_t n = std::min(have.size(), prompt.size());
    r.common = static_cast<size_t>(std::mismatch(have.begin(), have.begin() + static_cast<long>(n), prompt.begin()).first - have.begin());
    // At least the last prompt token is computed again: its logits start the generation.
    const size_t limit = std::min(r.common, prompt.size() - 1);
    // A recurrent state continues only from where it is (reusable_prefix gives 0 otherwise)...
    r.live = static_cast<size_t>(slot.session.reusable_prefix(static_cast<int64_t>(limit)));
    // ...or from a checkpoint of this slot within the shared prefix, whose KV rows the slot holds.
    if (takes_checkpoints_ && r.live < limit) {
        r.checkpoint = checkpoints_.best(slot.id, static_cast<int64_t>(limit));
        const int64_t first_turn = task.checkpoints.empty() ? 0 : task.checkpoints.front();
        r.looked_up = r.checkpoint > 0 || static_cast<int64_t>(limit) > first_turn;
    }
    return r;
}

size_t Scheduler::take_reuse(Slot& slot, const Reuse& offer) {
    size_t reuse = offer.live;
    if (offer.checkpoint > static_cast<int64_t>(offer.live)) {
        const RecurrentSnapshot* at = checkpoints_.take(slot.id, offer.checkpoint);
        // Restoring fails only on a snapshot of another shape, which the slot never takes; the
        // live prefix is then all there is.
        if (at && slot.session.restore_checkpoint(*at).is_ok()) {
            reuse = static_cast<size_t>(offer.checkpoint);
            slot.result.checkpoint_tokens = offer.checkpoint;
        }
    }
    if (offer.looked_up) {
        if (slot.result.checkpoint_tokens > 0) {
            checkpoints_.count_hit();
        } else {
            checkpoints_.count_miss();
        }
    }
    slot.session.truncate(static_cast<int64_t>(reuse));
    // The prompt overwrites the slot's rows from `common` on: checkpoints past it no longer
    // describe what the slot holds. Those up to it stay valid (the rows between the resumed
    // position and `common` are computed again from the same tokens).
    checkpoints_.drop_after(slot.id, static_cast<int64_t>(offer.common));
    return reuse;
}

size_t Scheduler::next_checkpoint(Slot& slot) {
    if (!takes_checkpoints_) return 0;
    const std::vector<int64_t>& at = slot.task->spec_.checkpoints;
    const size_t end = slot.task->spec_.prompt.size();
    while (slot.checkpoint_cursor < at.size() && at[slot.checkpoint_cursor] <= static_cast<int64_t>(slot.prompt_done)) {
        ++slot.checkpoint_cursor;
    }
    if (slot.checkpoint_cursor == at.size()) return 0;
    // The prompt's end needs no checkpoint of its own: the reply's end follows it.
    const size_t next = static_cast<size_t>(at[slot.checkpoint_cursor]);
    return next < end ? next : 0;
}

void Scheduler::checkpoint_if_due(Slot& slot) {
    if (!takes_checkpoints_) return;
    const std::vector<int64_t>& at = slot.task->spec_.checkpoints;
    if (slot.checkpoint_cursor < at.size() && at[slot.checkpoint_cursor] == static_cast<int64_t>(slot.prompt_done)) {
        keep_checkpoint(slot);
        ++slot.checkpoint_cursor;
    }
}

void Scheduler::keep_checkpoint(Slot& slot) {
    if (!takes_checkpoints_ || slot.session.n_past() == 0) return;
    checkpoints_.put(slot.id, slot.session.checkpoint());
}

}  // namespace strata::server
