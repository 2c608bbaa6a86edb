// `strata convert`: GGUF files for the built-in model from its training outputs
// (tools/builtin_model/README.md walks through the whole pipeline).
//
//   strata convert --tokenizer tokenizer.json -o vocab.gguf                     # vocabulary only
//   strata convert --tokenizer tokenizer.json --config config.json -o model.gguf [--type q8_0]
//                  --checkpoint model-00001.safetensors --checkpoint model-00002.safetensors
#include <fmt/format.h>

#include "cli/command.h"
#include "model/convert_builtin.h"

namespace strata::cli {
namespace {

struct ConvertOptions {
    std::string tokenizer, config, out, type = "q8_0";
    std::vector<std::string> checkpoints;
};

int run_convert(const ConvertOptions& o) {
    if (o.checkpoints.empty()) {
        if (!o.config.empty()) return report_failure("convert", "--config needs --checkpoint");
        if (Status s = write_builtin_vocab(o.tokenizer, o.out); !s) return report_failure("convert", s.message());
        fmt::print(stderr, "convert: wrote the vocabulary to {}\n", o.out);
        return 0;
    }
    if (o.config.empty()) return report_failure("convert", "--checkpoint needs --config (the training config JSON)");
    BuiltinConvertOptions b{.tokenizer_json = o.tokenizer, .config_json = o.config, .checkpoints = o.checkpoints,
                            .out = o.out};
    if (o.type == "q8_0") b.matrix_type = TensorType::Q8_0;
    else if (o.type == "f16") b.matrix_type = TensorType::F16;
    else if (o.type == "f32") b.matrix_type = TensorType::F32;
    else return report_failure("convert", fmt::format("--type: expected q8_0, f16 or f32, got \"{}\"", o.type));
    if (Status s = convert_builtin_model(b); !s) return report_failure("convert", s.message());
    fmt::print(stderr, "convert: wrote {} ({} matrices)\n", o.out, o.type);
    return 0;
}

CommandRegistration registration("convert", "Write the built-in model's GGUF from its tokenizer and checkpoint",
                                 [](CLI::App& app) {
    auto o = std::make_shared<ConvertOptions>();
    app.add_option("--tokenizer", o->tokenizer, "Tokenizer JSON from tools/builtin_model/train_tokenizer.py")
        ->required();
    app.add_option("--config", o->config, "Model config JSON written by train.py");
    app.add_option("--checkpoint", o->checkpoints, "Safetensors file (repeat for shards)");
    app.add_option("--type", o->type, "Type of the weight matrices: q8_0, f16 or f32")->capture_default_str();
    app.add_option("-o,--output", o->out, "GGUF file to write")->required();
    return [o] { return run_convert(*o); };
});

}  // namespace
}  // namespace strata::cli
