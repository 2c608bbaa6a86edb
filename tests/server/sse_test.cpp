// SSE framing of the OpenAI and Anthropic streams, and the stop-string / UTF-8 hold-back of streamed text.
#include <gtest/gtest.h>

#include "server/sse.h"
#include "runtime/text_stream.h"

namespace strata::server {
namespace {

TEST(Sse, EventsAreDataLinesEndedByABlankLine) {
    EXPECT_EQ(sse_event({{"a", 1}}), "data: {\"a\":1}\n\n");
    EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
    EXPECT_EQ(sse_comment("keep-alive"), ": keep-alive\n\n");
}

TEST(Sse, NewlinesInTextCannotEndAnEventEarly) {
    const std::string e = sse_event({{"content", "two\n\nlines\r\n"}});
    EXPECT_EQ(e.find("\n\n"), e.size() - 2);
    auto events = parse_sse(e);
    ASSERT_TRUE(events);
    ASSERT_EQ(events->size(), 1u);
    EXPECT_EQ(nlohmann::json::parse((*events)[0])["content"], "two\n\nlines\r\n");
}

TEST(Sse, InvalidUtf8IsReplacedNotThrown) {
    // A model can emit any bytes; the stream must stay valid JSON.
    const std::string e = sse_event({{"content", std::string("a\xff" "b")}});
    auto events = parse_sse(e);
    ASSERT_TRUE(events);
    EXPECT_EQ(nlohmann::json::parse((*events)[0])["content"], "a\xEF\xBF\xBD" "b");
}

TEST(Sse, ParserReadsAStreamBack) {
    const std::string stream = sse_event({{"i", 1}}) + sse_comment("keep-alive") + "data: {\"i\":\r\ndata: 2}\r\n\r\n" + sse_done();
    auto events = parse_sse(stream);
    ASSERT_TRUE(events);
    ASSERT_EQ(events->size(), 3u);
    EXPECT_EQ((*events)[0], "{\"i\":1}");
    EXPECT_EQ((*events)[1], "{\"i\":\n2}");  // multi-line data joined with \n
    EXPECT_EQ((*events)[2], "[DONE]");
}

TEST(Sse, NamedEventsCarryTheirTypeAsTheEventLine) {
    // Anthropic's stream: clients dispatch on the event line and skip events without one.
    EXPECT_EQ(sse_named_event({{"type", "ping"}}), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
    const std::string stream = sse_named_event({{"type", "message_start"}}) + sse_comment("x") + "event:message_stop\ndata: {}\n\n" +
                               sse_event({{"i", 1}});
    auto events = parse_sse_events(stream);
    ASSERT_TRUE(events);
    ASSERT_EQ(events->size(), 3u);
    EXPECT_EQ((*events)[0].name, "message_start");
    EXPECT_EQ((*events)[0].data, "{\"type\":\"message_start\"}");
    EXPECT_EQ((*events)[1].name, "message_stop");
    EXPECT_EQ((*events)[2].name, "");  // no event line: the OpenAI stream's
}

TEST(Sse, TruncatedStreamIsDetected) {
    EXPECT_FALSE(parse_sse("data: {\"i\":1}\n"));
    EXPECT_FALSE(parse_sse("data: {\"i\""));
    EXPECT_TRUE(parse_sse(""));
}

// Feeds pieces and returns what was released, piece by piece, joined by '|'.
std::string run_streamer(StopStringStreamer& s, const std::vector<std::string>& pieces) {
    std::string out;
    for (const auto& p : pieces) out += s.push(p) + "|";
    return out;
}

TEST(StopStringStreamer, StopStringSplitAcrossPiecesIsNeverSent) {
    StopStringStreamer s({"STOP"});
    EXPECT_EQ(run_streamer(s, {"abc S", "TO", "P tail"}), "abc |||");
    EXPECT_TRUE(s.stopped());
    EXPECT_EQ(s.text(), "abc ");
    EXPECT_EQ(s.finish(), "");
}

TEST(StopStringStreamer, HeldPrefixIsReleasedWhenItDiverges) {
    StopStringStreamer s({"STOP"});
    EXPECT_EQ(run_streamer(s, {"xS", "T", "x"}), "x||STx|");
    EXPECT_FALSE(s.stopped());
}

TEST(StopStringStreamer, EarliestOfSeveralStopsWins) {
    StopStringStreamer s({"bb", "a b"});
    EXPECT_EQ(run_streamer(s, {"1 a bb"}), "1 |");
    EXPECT_EQ(s.text(), "1 ");
    EXPECT_EQ(s.matched(), "a b");  // what Anthropic's stop_sequence reports
}

TEST(StopStringStreamer, MatchedIsEmptyUntilAStopIsReached) {
    StopStringStreamer s({"END"});
    EXPECT_EQ(s.push("no stop here"), "no stop here");
    EXPECT_EQ(s.matched(), "");
    s.push(" E");
    s.push("ND");
    EXPECT_TRUE(s.stopped());
    EXPECT_EQ(s.matched(), "END");
}

TEST(StopStringStreamer, Utf8CharactersAreNeverSplit) {
    StopStringStreamer s({});
    const std::string euro = "\xE2\x82\xAC";
    EXPECT_EQ(run_streamer(s, {"a\xE2", "\x82", "\xAC" "b"}), "a||" + euro + "b|");
}

TEST(StopStringStreamer, FinishReleasesWhatWasHeld) {
    StopStringStreamer s({"STOP"});
    EXPECT_EQ(s.push("end ST"), "end ");
    EXPECT_EQ(s.finish(), "ST");
}

}  // namespace
}  // namespace strata::server
