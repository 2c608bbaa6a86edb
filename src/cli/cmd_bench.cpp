// `strata bench -m MODEL.gguf [-p 512] [-n 128] [-r 3]`: prompt processing (pp) and token
// generation (tg) speed in tokens per second, like llama-bench: random token ids, a warm-up run,
// then mean ± standard deviation over the repetitions. `--json` for scripts.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include "cli/command.h"
#include "cli/device_flags.h"
#include "gguf/reader.h"
#include "model/model.h"
#include "runtime/session.h"

namespace strata::cli {
namespace {

struct BenchOptions {
    std::string model;
    std::vector<int64_t> n_prompt = {512};
    std::vector<int64_t> n_gen = {128};
    int repetitions = 3;
    int threads = 0;
    int64_t n_batch = 512;
    bool json = false;
    DeviceFlags device;
};

struct Stat {
    double mean = 0, sd = 0;
};
Stat stats(const std::vector<double>& v) {
    Stat s;
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
    s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0.0;
    return s;
}

int run_bench(const BenchOptions& o) {
    auto file = GgufFile::open(o.model);
    if (!file) return report_failure("bench", file.status().message());
    auto compute = o.device.options();
    if (!compute) return report_failure("bench", compute.status().message());
    auto model = load_model_on(*file, *compute);
    if (!model) return report_failure("bench", model.status().message());
    const ModelConfig& cfg = (*model)->config();
    ThreadPool pool(ThreadPool::Options{.threads = o.threads});
    std::mt19937 rng(42);
    std::uniform_int_distribution<int32_t> any_token(0, static_cast<int32_t>(cfg.n_vocab) - 1);

    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    if (!o.json) {
        fmt::print("model {} ({}), {} threads, on {}\n", o.model, cfg.arch, pool.size(), (*model)->device_name());
        fmt::print("| {:>8} | {:>20} |\n|---------:|---------------------:|\n", "test", "t/s");
    }
    auto report = [&](const std::string& name, const std::vector<double>& rates) {
        Stat s = stats(rates);
        if (o.json) {
            results.push_back({{"test", name}, {"tokens_per_second", s.mean}, {"stddev", s.sd}, {"samples", rates}});
        } else {
            fmt::print("| {:>8} | {:>11.2f} ± {:>6.2f} |\n", name, s.mean, s.sd);
        }
    };

    for (int64_t np : o.n_prompt) {
        if (np <= 0) continue;
        std::vector<double> rates;
        for (int r = -1; r < o.repetitions; ++r) {  // r = -1: warm-up, not counted
            Session session(**model, SessionOptions{.n_ctx = np, .n_batch = o.n_batch}, pool);
            std::vector<int32_t> tokens(static_cast<size_t>(np));
            for (auto& t : tokens) t = any_token(rng);
            auto t0 = std::chrono::steady_clock::now();
            if (Status s = session.append(tokens); !s) return report_failure("bench", s.message());
            double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r >= 0) rates.push_back(static_cast<double>(np) / secs);
        }
        report(fmt::format("pp{}", np), rates);
    }
    for (int64_t ng : o.n_gen) {
        if (ng <= 0) continue;
        std::vector<double> rates;
        for (int r = -1; r < o.repetitions; ++r) {
            Session session(**model, SessionOptions{.n_ctx = ng + 1, .n_batch = o.n_batch}, pool);
            int32_t first[1] = {any_token(rng)};
            if (Status s = session.append(first); !s) return report_failure("bench", s.message());
            auto t0 = std::chrono::steady_clock::now();
            for (int64_t i = 0; i < ng; ++i) {
                int32_t next[1] = {any_token(rng)};
                if (Status s = session.append(next); !s) return report_failure("bench", s.message());
            }
            double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r >= 0) rates.push_back(static_cast<double>(ng) / secs);
        }
        report(fmt::format("tg{}", ng), rates);
    }
    if (o.json) {
        nlohmann::ordered_json out{{"model", o.model}, {"arch", cfg.arch}, {"threads", pool.size()},
                                   {"backend", (*model)->device_name()}, {"results", results}};
        fmt::print("{}\n", out.dump(2));
    }
    return 0;
}

CommandRegistration registration("bench", "Measure prompt and generation speed (tokens per second)", [](CLI::App& app) {
    auto o = std::make_shared<BenchOptions>();
    app.add_option("-m,--model", o->model, "GGUF model")->required();
    app.add_option("-p,--n-prompt", o->n_prompt, "Prompt lengths to test (0: skip)")->capture_default_str();
    app.add_option("-n,--n-gen", o->n_gen, "Generation lengths to test (0: skip)")->capture_default_str();
    app.add_option("-r,--repetitions", o->repetitions, "Measured runs per test")->capture_default_str()->check(CLI::Range(1, 1000));
    app.add_option("-t,--threads", o->threads, "CPU threads (0: all)");
    app.add_option("-b,--batch-size", o->n_batch, "Prompt tokens per forward pass")->capture_default_str()->check(CLI::Range(1, 1 << 16));
    app.add_flag("--json", o->json, "Machine-readable output");
    o->device.add_to(app);
    return [o] { return run_bench(*o); };
});

}  // namespace
}  // namespace strata::cli
