#pragma once
// The built-in model (models/strata-kjv-moe.gguf, tools/builtin_model/) that `run`, `chat` and
// `serve` use when no -m is given. It is found from where the running `strata` is, not from the
// working directory, so the command works from any folder: a build tree's binary
// (<checkout>/build*/bin/strata) finds <checkout>/models, an installed one (<prefix>/bin/strata)
// finds <prefix>/share/strata/models.
//
//   auto path = model_or_builtin(o.model, "run");   // o.model when given, else the built-in one
//   if (!path) return report_failure("run", path.status().message());

#include <string>

#include "core/status.h"

namespace strata::cli {

inline constexpr const char* kBuiltinModelFile = "strata-kjv-moe.gguf";

// The built-in model's path, or an error naming where it was looked for and -m.
Result<std::string> find_builtin_model();

// `given` when not empty; else the built-in model, with a line on stderr saying it is used.
Result<std::string> model_or_builtin(const std::string& given, const std::string& command);

}  // namespace strata::cli
