#include "daemon/ingest/line_framer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trace2d::ingest {
namespace {

struct Framed {
  std::string line;
  std::uint64_t full_size;
  bool operator==(const Framed&) const = default;
};

class Collect {
 public:
  explicit Collect(LineFramer::Limits limits = {}) : m_framer(limits) {}
  void feed(std::string_view bytes) {
    m_framer.feed(bytes, [&](std::string_view line, std::uint64_t full) {
      lines.push_back({std::string(line), full});
    });
  }
  void feed_heads(std::string_view bytes) {
    m_framer.feed_heads(bytes, [&](std::string_view line, std::uint64_t full) {
      lines.push_back({std::string(line), full});
    });
  }
  void finish() {
    m_framer.finish([&](std::string_view line, std::uint64_t full) {
      lines.push_back({std::string(line), full});
    });
  }
  LineFramer& framer() { return m_framer; }
  std::vector<Framed> lines;

 private:
  LineFramer m_framer;
};

TEST(LineFramer, SplitsLinesInOneRead) {
  Collect c;
  c.feed("a\nbb\nccc\n");
  EXPECT_EQ(c.lines, (std::vector<Framed>{{"a", 1}, {"bb", 2}, {"ccc", 3}}));
}

TEST(LineFramer, EverySplitPointGivesTheSameLines) {
  const std::string stream = "{\"event\":\"a\"}\n\n{\"event\":\"bb\"}\nlast-without-newline";
  Collect whole;
  whole.feed(stream);
  whole.finish();
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    for (std::size_t cut2 = cut; cut2 <= stream.size(); cut2 += 3) {
      Collect parts;
      parts.feed(std::string_view(stream).substr(0, cut));
      parts.feed(std::string_view(stream).substr(cut, cut2 - cut));
      parts.feed(std::string_view(stream).substr(cut2));
      parts.finish();
      ASSERT_EQ(parts.lines, whole.lines) << "cuts at " << cut << ", " << cut2;
    }
  }
  ASSERT_EQ(whole.lines.size(), 4u);
  EXPECT_EQ(whole.lines[1], (Framed{"", 0}));  // an empty line is still a line
  EXPECT_EQ(whole.lines[3], (Framed{"last-without-newline", 20}));
}

TEST(LineFramer, ByteByByte) {
  Collect c;
  for (char ch : std::string("xy\nz\n")) {
    c.feed(std::string_view(&ch, 1));
  }
  EXPECT_EQ(c.lines, (std::vector<Framed>{{"xy", 2}, {"z", 1}}));
}

TEST(LineFramer, FinishWithoutPartialEmitsNothing) {
  Collect c;
  c.feed("a\n");
  c.finish();
  EXPECT_EQ(c.lines.size(), 1u);
}

TEST(LineFramer, LineAtTheLimitIsWhole) {
  Collect c({.max_line_bytes = 100, .kept_bytes = 10});
  const std::string line(100, 'x');
  c.feed(line.substr(0, 40));
  c.feed(line.substr(40) + "\n");
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0], (Framed{line, 100}));
}

TEST(LineFramer, LongLineKeepsItsHeadAndFullSize) {
  Collect c({.max_line_bytes = 100, .kept_bytes = 10});
  std::string line;
  for (int i = 0; i < 1000; ++i) {
    line += static_cast<char>('a' + i % 26);
  }
  // Arrives in pieces, crossing the limit in the middle of one.
  c.feed(line.substr(0, 60));
  c.feed(line.substr(60, 500));
  c.feed(line.substr(560) + "\nnext\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0], (Framed{line.substr(0, 10), 1000}));
  EXPECT_EQ(c.lines[1], (Framed{"next", 4}));
}

TEST(LineFramer, LongLineInOneReadIsCutToo) {
  Collect c({.max_line_bytes = 100, .kept_bytes = 10});
  c.feed(std::string(150, 'q') + "\nok\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].full_size, 150u);
  EXPECT_EQ(c.lines[0].line.size(), 10u);
  EXPECT_EQ(c.lines[1], (Framed{"ok", 2}));
}

TEST(LineFramer, LongFinalLineAtEof) {
  Collect c({.max_line_bytes = 100, .kept_bytes = 10});
  c.feed(std::string(300, 'z'));
  c.finish();
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0], (Framed{std::string(10, 'z'), 300}));
}

TEST(LineFramer, HoldsOnlyTheHeadOfAnEndlessLine) {
  LineFramer framer({.max_line_bytes = 1000, .kept_bytes = 100});
  const std::string block(4096, 'w');
  for (int i = 0; i < 1000; ++i) {
    framer.feed(block, [](std::string_view, std::uint64_t) { FAIL() << "no newline was sent"; });
  }
  EXPECT_LE(framer.buffered_bytes(), 2048u);  // memory stays bounded
  EXPECT_TRUE(framer.has_partial_line());
}

TEST(LineFramer, AnUnfinishedLineCutShortKeepsItsHeadAndCountsTheRest) {
  Collect c({.max_line_bytes = 100000, .kept_bytes = 1000});
  c.feed(std::string(5000, 'a'));
  c.framer().cut_short(16);  // its sender holds too much: only the head is kept from now on
  EXPECT_LE(c.framer().buffered_bytes(), 1024u);
  c.feed(std::string(3000, 'b') + "\nnext\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0], (Framed{std::string(16, 'a'), 8000}));
  EXPECT_EQ(c.lines[1], (Framed{"next", 4}));  // the next line is whole again
}

// Lines of a sender over its share are only counted (and their SID read
// from the head): a 2 MB line is not copied whole to be dropped.
TEST(LineFramer, LinesOnlyCountedKeepTheirHeadsNotTheirBodies) {
  Collect c;
  const std::string head = R"({"event":"data","sid":"s-1","value":")";
  const std::string line = head + std::string(2 * 1024 * 1024, 'x') + "\"}";
  for (std::size_t at = 0; at < line.size(); at += 256 * 1024) {
    c.feed_heads(std::string_view(line).substr(at, 256 * 1024));
    EXPECT_LE(c.framer().kept_bytes(), LineFramer::k_head_bytes);
  }
  c.feed_heads("\nshort\n");
  ASSERT_EQ(c.lines.size(), 2u);
  EXPECT_EQ(c.lines[0].full_size, line.size());
  EXPECT_EQ(c.lines[0].line, line.substr(0, LineFramer::k_head_bytes));
  EXPECT_EQ(c.lines[1], (Framed{"short", 5}));  // whole lines in one read are whole
  c.feed("whole again\n");
  EXPECT_EQ(c.lines.back(), (Framed{"whole again", 11}));
}

TEST(LineFramer, CuttingWithNothingHeldChangesNothing) {
  Collect c;
  c.framer().cut_short(1);
  c.feed("whole\n");
  EXPECT_EQ(c.lines, (std::vector<Framed>{{"whole", 5}}));
}

TEST(LineFramer, SaysWhenItDiscardsALongLine) {
  Collect c({.max_line_bytes = 100, .kept_bytes = 10});
  c.feed(std::string(100, 'a'));
  EXPECT_FALSE(c.framer().discarding());  // at the limit: still held whole
  c.feed("b");
  EXPECT_TRUE(c.framer().discarding());
  c.feed("\n");
  EXPECT_FALSE(c.framer().discarding());
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(c.lines[0].full_size, 101u);
}

TEST(LineFramer, ResumedInsideALongLineDiscardsUpToTheNextNewline) {
  Collect c({.max_line_bytes = 100, .kept_bytes = 10});
  c.framer().resume_inside_long_line();
  EXPECT_TRUE(c.framer().discarding());
  c.feed(std::string(50, 'x') + "\nnext\n");
  ASSERT_EQ(c.lines.size(), 2u);
  // Reported as cut short, so it becomes a reject; what is kept is the head
  // of the rest (the line's own head went with the earlier run).
  EXPECT_EQ(c.lines[0].line, std::string(10, 'x'));
  EXPECT_GT(c.lines[0].full_size, 100u);
  EXPECT_EQ(c.lines[1], (Framed{"next", 4}));
}

}  // namespace
}  // namespace trace2d::ingest
