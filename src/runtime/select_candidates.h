#pragma once
// The host's reduction of a row of logits to a sampler's candidates (backend/logit_candidates.h):
// what Sampler::sample runs on host logits, and the reference the GPU's reduction is held to.
// It never sorts: top-k keeps the logits at or above the smallest of k chunks' maxima (each such
// maximum is a logit, so at least k pass, and the floor is near the k-th largest); without top-k
// the min-p floor and the top-p band floor bound the set.
//
//   CandidateSet set;
//   select_candidates(logits, n_vocab, sampler.query(n_vocab), set, scratch);

#include <cstdint>
#include <vector>

#include "backend/logit_candidates.h"

namespace strata {

// `scratch` holds the penalized copy of the logits when the query penalizes any token.
void select_candidates(const float* logits, int64_t n_vocab, const CandidateQuery& query, CandidateSet& out,
                       std::vector<float>& scratch);

}  // namespace strata
