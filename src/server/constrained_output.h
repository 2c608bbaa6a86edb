#pragma once
// What a request asks its output to be (response_format, a GBNF `grammar`, a forced tool call),
// turned into the grammar the scheduler samples under (runtime/grammar_sampling.h). Every route
// parses its own API's fields into an OutputConstraint on GenerationRequest::constraint;
// prepare_generation() (generation.h) then calls apply_output_constraint(), so the OpenAI chat
// and completions routes, the Anthropic route and any other route built on prepare_generation
// share one path.
//
//   r.constraint = OutputConstraint::tool_call("get_weather");   // or json_schema(...), gbnf(...)
//   auto prepared = prepare_generation(ctx, std::move(r));       // 400 when the schema/grammar is bad
//   ChatOutputParser parser(prepared.value->output_format, ...); // the syntax the grammar writes
//
// Forced tool calls are written in the model family's syntax: Hermes / Qwen3
// (<tool_call>{"name": …, "arguments": …}</tool_call>) and Llama 3 ({"name": …, "parameters": …}).
// A model whose template has no tool-call syntax (the built-in model) is given the Hermes one, and
// its output parsed as Hermes. Families whose markers are control tokens or whose arguments are
// not JSON (Mistral, DeepSeek, gpt-oss, Qwen3-Coder, GLM) are refused with a 400 for now.

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/grammar.h"
#include "server/openai_schema.h"
#include "tokenizer/tool_calls/chat_format.h"

namespace strata::server {

// The grammar of a forced call to one of `tools` (OpenAI's shape: [{"type": "function",
// "function": {"name", "parameters"}}]), or to `name` alone when it is not empty, in `format`'s
// syntax; `thinking_open`: the prompt leaves the model inside its reasoning block. Errors are 400s.
ApiResult<std::string> tool_call_gbnf(tool_calls::ChatFormat format, const nlohmann::ordered_json& tools,
                                      const std::string& name, bool thinking_open);

// The format the output parser must read when the constraint forces a call: `model_format`, or
// Hermes for a model without a tool-call syntax.
tool_calls::ChatFormat forced_call_format(tool_calls::ChatFormat model_format);

// The grammar `constraint` asks for, compiled; nullptr when it asks for none. `tools`: the
// request's tools (for a forced call). Errors are 400s naming the request field.
ApiResult<std::shared_ptr<const Grammar>> compile_output_constraint(const OutputConstraint& constraint,
                                                                    tool_calls::ChatFormat format,
                                                                    const nlohmann::ordered_json& tools,
                                                                    bool thinking_open);

}  // namespace strata::server
