// Tokenizer throughput: encoding 1 MB of mixed text (English-like prose with a Zipf word
// distribution, code, numbers, and the multilingual strings of llama.cpp's vocab tests) with
// the vocabularies in testdata/vocab, with and without the word cache. Reports MB/s.
//
//   build/bin/tokenizer_bench                        # finds ../shared/testdata beside the checkout
//   STRATA_TESTDATA=/data/testdata build/bin/tokenizer_bench --benchmark_filter=gpt_2
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>

#include "core/file.h"
#include "gguf/reader.h"
#include "tokenizer/tokenizer.h"

namespace {

using namespace strata;

std::string testdata_root() {
    if (const char* env = std::getenv("STRATA_TESTDATA"); env && *env) return env;
    const std::filesystem::path beside_source =
        std::filesystem::path(__FILE__).parent_path() / ".." / ".." / "shared" / "testdata";
    for (const std::filesystem::path& candidate :
         {std::filesystem::path("../shared/testdata"), std::filesystem::path("../../shared/testdata"),
          std::filesystem::path("../../../shared/testdata"), beside_source}) {
        if (std::filesystem::is_directory(candidate / "vocab")) return candidate.string();
    }
    return "../shared/testdata";
}

// About `bytes` of text; deterministic.
std::string make_text(size_t bytes) {
    std::mt19937 rng(1234);
    static const char* kSyllables[] = {"ta", "ke", "ri", "mon", "sa", "lu", "pre", "ex", "in", "tion", "ver",
                                       "al",  "o",  "an", "der", "st", "ing", "qu", "ph", "is", "ly",   "com"};
    std::vector<std::string> words;
    for (int i = 0; i < 20000; ++i) {
        std::string w;
        const int n = 1 + int(rng() % 4);
        for (int k = 0; k < n; ++k) w += kSyllables[rng() % std::size(kSyllables)];
        if (rng() % 10 == 0) w[0] = char(std::toupper(static_cast<unsigned char>(w[0])));
        words.push_back(w);
    }
    // Zipf-like: word i drawn with weight 1/(i+1).
    std::vector<double> weights(words.size());
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = 1.0 / double(i + 1);
    std::discrete_distribution<size_t> pick(weights.begin(), weights.end());

    std::string multilingual;
    if (auto inp = read_file_to_string(testdata_root() + "/vocab/ggml-vocab-gpt-2.gguf.inp")) multilingual = *inp;

    std::string text;
    text.reserve(bytes + 4096);
    while (text.size() < bytes) {
        const unsigned kind = rng() % 100;
        if (kind < 80) {  // a sentence
            const int n = 5 + int(rng() % 20);
            for (int k = 0; k < n; ++k) {
                text += words[pick(rng)];
                text += (rng() % 12 == 0) ? ", " : " ";
            }
            text += (rng() % 5 == 0) ? "?\n" : ". ";
        } else if (kind < 92) {  // code
            text += "    for (int i = 0; i < " + std::to_string(rng() % 100000) + "; ++i) { x[i] += y[i] * 0.5f; }\n";
        } else if (kind < 97) {  // numbers
            text += std::to_string(rng()) + " + " + std::to_string(rng() % 1000) + " = ?\n";
        } else if (!multilingual.empty()) {
            const size_t at = rng() % multilingual.size();
            text += multilingual.substr(at, 300);  // may cut a UTF-8 character: malformed input too
        }
    }
    return text;
}

const std::string& bench_text() {
    static const std::string text = make_text(size_t(1) << 20);
    return text;
}

void encode_megabyte(benchmark::State& state, const std::string& vocab, bool cache) {
    const std::string path = testdata_root() + "/vocab/ggml-vocab-" + vocab + ".gguf";
    auto gguf = GgufFile::open(path);
    if (!gguf) {
        state.SkipWithError(("vocabulary not found: " + path + " (set STRATA_TESTDATA)").c_str());
        return;
    }
    TokenizerOptions options;
    if (!cache) options.word_cache_entries = 0;
    auto tok = Tokenizer::from_gguf(*gguf, options);
    if (!tok) {
        state.SkipWithError(tok.status().message().c_str());
        return;
    }
    const std::string& text = bench_text();
    size_t tokens = 0;
    for (auto _ : state) {
        auto ids = tok->encode(text, false, false);
        tokens = ids.size();
        benchmark::DoNotOptimize(ids.data());
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(text.size()));
    state.counters["MB/s"] = benchmark::Counter(double(text.size()) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["tokens"] = double(tokens);
}

void register_all() {
    for (const char* vocab : {"llama-spm", "gpt-2", "deepseek-llm", "deepseek-coder", "falcon", "bert-bge"}) {
        for (bool cache : {true, false}) {
            std::string name = std::string("encode_1MB/") + vocab + (cache ? "/cached" : "/uncached");
            benchmark::RegisterBenchmark(name.c_str(), [vocab = std::string(vocab), cache](benchmark::State& s) {
                encode_megabyte(s, vocab, cache);
            })->Unit(benchmark::kMillisecond);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
