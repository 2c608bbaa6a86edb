// What `strata plan` shows: proportional bars, the SVG drawing and the JSON a script reads.
#include <gtest/gtest.h>

#include <numeric>

#include "plan/render.h"
#include "plan/units.h"
#include "toy_model.h"

namespace strata {
namespace {

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

TEST(BarWidths, ProportionalAndSummingToTheWidth) {
    EXPECT_EQ(bar_widths({50, 25, 25}, 8), (std::vector<int>{4, 2, 2}));
    EXPECT_EQ(bar_widths({1, 1, 1}, 10).size(), 3u);
    EXPECT_EQ(sum(bar_widths({1, 1, 1}, 10)), 10);
    // Zero bytes, zero characters; a tiny non-zero segment still shows.
    EXPECT_EQ(bar_widths({0, 1000000, 1}, 20), (std::vector<int>{0, 19, 1}));
    EXPECT_EQ(bar_widths({0, 0}, 10), (std::vector<int>{0, 0}));
    // Largest remainders get the leftovers: 10 · (0.35, 0.35, 0.3) = 3.5, 3.5, 3 → 4, 3, 3 or 3, 4, 3.
    auto w = bar_widths({35, 35, 30}, 10);
    EXPECT_EQ(sum(w), 10);
    EXPECT_EQ(w[2], 3);
    for (uint64_t a : {1ull, 7ull, 1000ull, 123456789ull}) {
        for (int width : {1, 5, 64}) {
            auto ws = bar_widths({a, 3 * a + 1, 5, 0, a / 2 + 1}, width);
            if (width >= 4) {
                EXPECT_EQ(sum(ws), width);
            }
        }
    }
}

Plan toy_plan(uint64_t vram, uint64_t ram) {
    ModelInventory inv = test::toy_inventory();
    PlanRequest r;
    if (vram) r.gpu = DeviceMemory{"toy GPU", vram, vram};
    r.vram_reserve = 4096;
    r.ram_bytes = ram;
    r.ram_reserve = 1000;
    r.n_ctx = 100;
    r.n_batch = 8;
    return make_plan(inv, summarize_weights(inv).value(), r);
}

TEST(RenderText, BarsWithLegendAndVerdict) {
    Plan p = toy_plan(148032, 28156);  // planner_test.cpp: 3 slots, 2 in the arena, 3 on disk
    std::string text = render_plan_text(p, 40);
    EXPECT_NE(text.find("VRAM  ["), std::string::npos) << text;
    EXPECT_NE(text.find("RAM   ["), std::string::npos) << text;
    EXPECT_NE(text.find("3 of 8 experts (37.5%)"), std::string::npos) << text;
    EXPECT_NE(text.find("2 of 8 experts (25.0%)"), std::string::npos) << text;
    EXPECT_NE(text.find("disk   " + format_bytes(9144)), std::string::npos) << text;
    EXPECT_NE(text.find("FITS\n"), std::string::npos);
    // Each bar is exactly 40 characters between its brackets.
    size_t open = text.find('[');
    size_t close = text.find(']', open);
    EXPECT_EQ(close - open - 1, 40u);
}

TEST(RenderText, RefusalShowsTheCapacityMarkAndSuggestions) {
    Plan p = toy_plan(100000, 1 << 20);
    std::string text = render_plan_text(p);
    EXPECT_NE(text.find("DOES NOT FIT"), std::string::npos);
    EXPECT_NE(text.find('|'), std::string::npos) << text;  // where the capacity ends
    EXPECT_NE(text.find("needs " + format_bytes(p.vram_fixed() + p.vram_reserve)), std::string::npos) << text;
    EXPECT_NE(text.find("what would make it fit:"), std::string::npos);
}

TEST(RenderText, NoGpuSaysSo) {
    std::string text = render_plan_text(toy_plan(0, 1 << 20));
    EXPECT_NE(text.find("VRAM   none"), std::string::npos) << text;
}

TEST(RenderSvg, StandaloneLabelledAndEscaped) {
    Plan p = toy_plan(148032, 28156);
    p.model_name = "a<b>&c";
    std::string svg = render_plan_svg(p);
    EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_NE(svg.find("</svg>"), std::string::npos);
    EXPECT_NE(svg.find("a&lt;b&gt;&amp;c"), std::string::npos);
    EXPECT_EQ(svg.find("a<b>"), std::string::npos);
    EXPECT_NE(svg.find("expert slots: " + format_bytes(9216)), std::string::npos);
    EXPECT_NE(svg.find(">FITS<"), std::string::npos);
    // One rect per non-zero segment of each bar, plus one legend square each, plus the background.
    size_t rects = 0;
    for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1)) ++rects;
    size_t segments = 0;
    for (const auto& s : p.vram_segments()) segments += s.bytes > 0;
    for (const auto& s : p.ram_segments()) segments += s.bytes > 0;
    EXPECT_EQ(rects, 2 * segments + 1);
}

TEST(RenderJson, CarriesTheNumbers) {
    Plan p = toy_plan(148032, 28156);
    auto j = plan_to_json(p);
    EXPECT_EQ(j["fits"], true);
    EXPECT_EQ(j["vram"]["capacity"], 148032u);
    EXPECT_EQ(j["vram"]["expert_slots"], 3u);
    EXPECT_EQ(j["vram"]["segments"]["dense"], 34304u);
    EXPECT_EQ(j["vram"]["workspace"]["expert_staging"], 12288u);
    EXPECT_EQ(j["ram"]["arena_experts"], 2u);
    EXPECT_EQ(j["disk"]["experts"], 3u);
    EXPECT_EQ(j["weights"]["expert_slot_bytes"], 3072u);
    EXPECT_EQ(j["request"]["kv_type"], "f16");
    EXPECT_TRUE(plan_to_json(toy_plan(0, 1 << 20))["vram"].is_null());
}

}  // namespace
}  // namespace strata
