// The published Qwen3.8-Flash-Next files' quant mixes (REAL_GGUFS.md §A3, §A4). Only UD-Q4_K_XL is
// known tensor by tensor (a real header, QH); UD-Q3_K_XL from a third-party census; the others
// from partial facts, the rest guessed so that the files' published sizes come out (shard 1 and the
// expert arena: docs/SYNTH_QWEN4EXP.md gives each mix's sizes beside the published ones).
// Routed down experts and shared-expert down rows are 640 wide: only 32- and 64-value block types
// (Q2_0, Q5_1, Q8_0, IQ4_NL, ...) fit them, never a 256-value K- or i-quant.
#include <algorithm>

#include "model/synth_qwen4exp.h"

namespace strata {

namespace {

using T = TensorType;

// The blocks unsloth's UD files give a larger type (REAL_GGUFS.md §A3: down Q8_0 on 2, 4, 30, 46, 47).
const std::vector<uint32_t> kUnslothBumped = {2, 4, 30, 46, 47};

// 19 blocks: with IQ4_NL down there and Q2_0 elsewhere the IQ3_S arena comes to the published 50.3 GB.
std::vector<uint32_t> odd_blocks_below_38() {
    std::vector<uint32_t> v;
    for (uint32_t b = 1; b < 38; b += 2) v.push_back(b);
    return v;
}

std::vector<Qwen4ExpMix> make_mixes() {
    std::vector<Qwen4ExpMix> m;
    //            name, facts, experts,
    //            token_embd, output, output_hc, ple_table, ple_key, ple_value,
    //            router, hc_matrix, attention, gdn, indexer, shared_gate_up, shared_down,
    //            gate_up, down, gate_up exceptions, down exceptions
    m.push_back({"ud-q4_k_xl",
                 "unsloth UD-Q4_K_XL: every tensor's type read from the real header (REAL_GGUFS.md A3)", 512,
                 T::Q8_0, T::Q8_0, T::Q8_0, T::IQ4_NL, T::Q8_0, T::Q8_0,
                 T::F32, T::Q8_0, T::Q8_0, T::Q8_0, T::BF16, T::Q8_0, T::Q8_0,
                 T::Q4_K, T::Q5_1, {2}, T::Q5_K, kUnslothBumped, T::Q8_0});
    m.push_back({"ud-q3_k_xl",
                 "unsloth UD-Q3_K_XL: a third-party census (NEW_ARCHS.md A2.2, REAL_GGUFS.md A4)", 512,
                 T::Q8_0, T::Q6_K, T::Q8_0, T::IQ4_NL, T::Q8_0, T::Q8_0,
                 T::F32, T::Q8_0, T::Q8_0, T::Q8_0, T::BF16, T::Q8_0, T::Q8_0,
                 T::IQ3_XXS, T::IQ4_NL, {2}, T::IQ4_XS, kUnslothBumped, T::Q8_0});
    m.push_back({"ud-iq4_xs",
                 "unsloth UD-IQ4_XS: experts, attention, embeddings, output and routers read (A4); which 5 "
                 "blocks take Q8_0 down experts, and the HC, shared-expert and PLE types, guessed as UD-Q4_K_XL's",
                 512,
                 T::Q8_0, T::Q6_K, T::Q8_0, T::IQ4_NL, T::Q8_0, T::Q8_0,
                 T::F32, T::Q8_0, T::Q8_0, T::Q8_0, T::BF16, T::Q8_0, T::Q8_0,
                 T::IQ3_S, T::IQ4_NL, {}, T::IQ3_S, kUnslothBumped, T::Q8_0});
    m.push_back({"q2_0",
                 "GSQ-RCO Q2_0: routers and HC matrices BF16, table IQ4_NL, ple_key Q2_0, ple_value BF16 read; "
                 "every expert Q2_0 derived from the arena size; attention, DeltaNet and shared experts Q2_0 and "
                 "embeddings Q8_0 guessed (they give the published shard-1 size within 0.2%)",
                 512,
                 T::Q8_0, T::Q8_0, T::BF16, T::IQ4_NL, T::Q2_0, T::BF16,
                 T::BF16, T::BF16, T::Q2_0, T::Q2_0, T::BF16, T::Q2_0, T::Q2_0,
                 T::Q2_0, T::Q2_0, {}, T::Q2_0, {}, T::Q2_0});
    m.push_back({"iq2_xs",
                 "GSQ-RCO IQ2_XS: routers and HC matrices BF16, table IQ4_NL, ple_value BF16 read; experts "
                 "IQ2_XS with Q2_0 down (IQ4_NL on blocks 2, 4, 30, 46, 47), dense IQ2_XS, ple_key Q2_0 guessed",
                 512,
                 T::Q8_0, T::Q8_0, T::BF16, T::IQ4_NL, T::Q2_0, T::BF16,
                 T::BF16, T::BF16, T::IQ2_XS, T::IQ2_XS, T::BF16, T::IQ2_XS, T::Q2_0,
                 T::IQ2_XS, T::Q2_0, {}, T::IQ2_XS, kUnslothBumped, T::IQ4_NL});
    m.push_back({"iq3_xxs",
                 "GSQ-RCO IQ3_XXS: 1,224 tensors, routers and HC matrices BF16, table IQ4_NL read; experts "
                 "IQ3_XXS with Q2_0 down (IQ4_NL on blocks 2, 4, 30, 46, 47), dense IQ3_XXS, ple_key IQ3_XXS "
                 "guessed (the real file's 38 Q2_0 tensors are not placed)",
                 512,
                 T::Q8_0, T::Q8_0, T::BF16, T::IQ4_NL, T::IQ3_XXS, T::BF16,
                 T::BF16, T::BF16, T::IQ3_XXS, T::IQ3_XXS, T::BF16, T::IQ3_XXS, T::Q2_0,
                 T::IQ3_XXS, T::Q2_0, {}, T::IQ3_XXS, kUnslothBumped, T::IQ4_NL});
    m.push_back({"iq3_s",
                 "GSQ-RCO IQ3_S: routers and HC matrices BF16, table IQ4_NL read; experts IQ3_S with down Q2_0 "
                 "(IQ4_NL on the odd blocks below 38), dense Q4_K, shared down IQ4_NL, ple_key IQ4_XS guessed",
                 512,
                 T::Q8_0, T::Q8_0, T::BF16, T::IQ4_NL, T::IQ4_XS, T::BF16,
                 T::BF16, T::BF16, T::Q4_K, T::Q4_K, T::BF16, T::Q4_K, T::IQ4_NL,
                 T::IQ3_S, T::Q2_0, {}, T::IQ3_S, odd_blocks_below_38(), T::IQ4_NL});
    m.push_back({"coder-iq1_m",
                 "GSQ-RCO Coder IQ1_M: 256 experts, routers and HC matrices BF16, table IQ4_NL read; experts "
                 "gate/up IQ3_S (\"stored like IQ3_S\") with Q2_0 down (IQ4_NL on blocks 2, 4, 30, 46, 47), "
                 "dense Q8_0, ple_key Q2_0 guessed",
                 256,
                 T::Q8_0, T::Q8_0, T::BF16, T::IQ4_NL, T::Q2_0, T::BF16,
                 T::BF16, T::BF16, T::Q8_0, T::Q8_0, T::BF16, T::Q8_0, T::Q8_0,
                 T::IQ3_S, T::Q2_0, {}, T::IQ3_S, kUnslothBumped, T::IQ4_NL});
    return m;
}

bool listed(const std::vector<uint32_t>& blocks, uint32_t b) {
    return std::find(blocks.begin(), blocks.end(), b) != blocks.end();
}

}  // namespace

TensorType Qwen4ExpMix::gate_up_at(uint32_t block) const {
    return listed(gate_up_blocks, block) ? gate_up_other : expert_gate_up;
}

TensorType Qwen4ExpMix::down_at(uint32_t block) const { return listed(down_blocks, block) ? down_other : expert_down; }

const std::vector<Qwen4ExpMix>& qwen4exp_mixes() {
    static const std::vector<Qwen4ExpMix> mixes = make_mixes();
    return mixes;
}

const Qwen4ExpMix* find_qwen4exp_mix(const std::string& name) {
    for (const Qwen4ExpMix& m : qwen4exp_mixes()) {
        if (name == m.name) return &m;
    }
    return nullptr;
}

}  // namespace strata
