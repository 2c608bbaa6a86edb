#pragma once
// CPU ops of gated DeltaNet (linear attention) layers, as Qwen3-Next and Qwen3.5 use them. Each
// is the plain float32 formula of HF transformers' torch reference (torch_causal_conv1d_update,
// l2norm, torch_recurrent_gated_delta_rule, Qwen3NextRMSNormGated); the recurrence is stepped
// token by token, so a batch and the same tokens fed one at a time give the same numbers.
//
//   cpu_causal_conv1d_silu(qkv, n_tokens, n_ch, conv_w, kernel, history, qkv_conv);
//   cpu_l2_norm(q, n_tokens * n_heads, d_k, 1e-6f);
//   cpu_gated_delta_step(state, q, k, v, g, beta, d_k, d_v, out);     // one head, one token
//   cpu_gated_rms_norm(out, z, norm_w, n_tokens * n_v_heads, d_v, eps, out);

#include <cstdint>

namespace strata {

// Depthwise causal convolution over time, then SiLU:
//   out[t][c] = silu(Σ_j weight[c][j] · x[t - (kernel-1) + j][c])
// where positions before this batch come from `history`: kernel-1 rows of n_ch (oldest first),
// updated on return to the batch's last kernel-1 inputs. weight: n_ch rows of `kernel` taps (GGUF
// ssm_conv1d [kernel, n_ch]). x, out: n_tokens rows of n_ch; they must not overlap.
void cpu_causal_conv1d_silu(const float* x, int64_t n_tokens, int64_t n_ch, const float* weight, int64_t kernel,
                            float* history, float* out);

// In place, per row: x *= 1 / sqrt(Σ x² + eps)   (FLA's and HF's l2norm; eps inside the root)
void cpu_l2_norm(float* x, int64_t n_rows, int64_t n, float eps);

// One token of the gated delta rule for one head. state: d_k rows of d_v (S[i][j], i over the
// key dimension), updated in place:
//   S ← exp(g) · S;   delta = beta · (v − Sᵀk);   S ← S + k deltaᵀ;   out = Sᵀq
// q is expected already scaled (HF multiplies the l2-normalized q by 1/sqrt(d_k)).
void cpu_gated_delta_step(float* state, const float* q, const float* k, const float* v, float g, float beta,
                          int64_t d_k, int64_t d_v, float* out);

// How the gated norm turns the gate z into a factor: silu(z) (Qwen3-Next, Qwen3.5) or sigmoid(z)
// (qwen4exp's `output_gate_type="sigmoid"`).
enum class NormGate { Silu, Sigmoid };

// Per row of n: out = x / sqrt(mean(x²) + eps) · weight · gate(z)   (out may alias x)
void cpu_gated_rms_norm(const float* x, const float* z, const float* weight, int64_t n_rows, int64_t n, float eps,
                        float* out, NormGate gate = NormGate::Silu);

// PyTorch's softplus (beta 1, threshold 20): x above the threshold is returned as is.
float softplus(float x);

}  // namespace strata
