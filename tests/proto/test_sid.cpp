// Session-id helpers (proto/sid.hpp): a child's SID is "<parent SID>/<own>".

#include <gtest/gtest.h>

#include <string>

#include "proto/sid.hpp"

namespace proto = trace2d::proto;

namespace {

constexpr std::string_view k_top = "20261121T235101.565577Z-H0a7c9cdf-P000009e9";
constexpr std::string_view k_child =
    "20261121T235101.565577Z-H0a7c9cdf-P000009e9/20261121T235101.601234Z-H0a7c9cdf-P000009f0";
constexpr std::string_view k_grandchild =
    "20261121T235101.565577Z-H0a7c9cdf-P000009e9/20261121T235101.601234Z-H0a7c9cdf-P000009f0/"
    "20261121T235101.612345Z-H0a7c9cdf-P000009f7";

}  // namespace

TEST(Sid, TopLevelHasNoParent) {
  EXPECT_FALSE(proto::sid_parent(k_top).has_value());
  EXPECT_EQ(proto::sid_root(k_top), k_top);
  EXPECT_EQ(proto::sid_depth(k_top), 0u);
  EXPECT_EQ(proto::sid_leaf(k_top), k_top);
}

TEST(Sid, ChildOfGitProcess) {
  ASSERT_TRUE(proto::sid_parent(k_child).has_value());
  EXPECT_EQ(*proto::sid_parent(k_child), k_top);
  EXPECT_EQ(proto::sid_root(k_child), k_top);
  EXPECT_EQ(proto::sid_depth(k_child), 1u);
  EXPECT_EQ(proto::sid_leaf(k_child), "20261121T235101.601234Z-H0a7c9cdf-P000009f0");
}

TEST(Sid, GrandchildWalksUpOneLevelAtATime) {
  ASSERT_TRUE(proto::sid_parent(k_grandchild).has_value());
  EXPECT_EQ(*proto::sid_parent(k_grandchild), k_child);
  EXPECT_EQ(*proto::sid_parent(*proto::sid_parent(k_grandchild)), k_top);
  EXPECT_EQ(proto::sid_root(k_grandchild), k_top);
  EXPECT_EQ(proto::sid_depth(k_grandchild), 2u);
  EXPECT_EQ(proto::sid_leaf(k_grandchild), "20261121T235101.612345Z-H0a7c9cdf-P000009f7");
}

TEST(Sid, ResultsAreViewsIntoTheInput) {
  const std::string sid(k_child);
  const auto parent = proto::sid_parent(sid);
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->data(), sid.data());
  EXPECT_EQ(proto::sid_root(sid).data(), sid.data());
  EXPECT_EQ(proto::sid_leaf(sid).data(), sid.data() + k_top.size() + 1);
}

// GIT_TRACE2_PARENT_SID is free text set by whatever started the tree.
TEST(Sid, FreeTextPrefixWithSpacesAndSlashes) {
  const std::string_view sid = "my build job 42/step one/20261121T235101.565577Z-H0a7c9cdf-P000009e9";
  EXPECT_EQ(proto::sid_parent(sid), std::optional<std::string_view>("my build job 42/step one"));
  EXPECT_EQ(proto::sid_root(sid), "my build job 42");
  EXPECT_EQ(proto::sid_depth(sid), 2u);
  EXPECT_EQ(proto::sid_leaf(sid), "20261121T235101.565577Z-H0a7c9cdf-P000009e9");
  EXPECT_EQ(proto::sid_leaf("a b c"), "a b c");
  EXPECT_EQ(proto::sid_root("a b c"), "a b c");
}

TEST(Sid, DegenerateSlashes) {
  EXPECT_EQ(proto::sid_parent("a//b"), std::optional<std::string_view>("a/"));
  EXPECT_EQ(proto::sid_depth("a//b"), 2u);
  EXPECT_EQ(proto::sid_leaf("a//b"), "b");
  EXPECT_EQ(proto::sid_root("a//b"), "a");

  EXPECT_EQ(proto::sid_parent("/leaf"), std::optional<std::string_view>(""));
  EXPECT_EQ(proto::sid_root("/leaf"), "");
  EXPECT_EQ(proto::sid_leaf("/leaf"), "leaf");

  EXPECT_EQ(proto::sid_parent("root/"), std::optional<std::string_view>("root"));
  EXPECT_EQ(proto::sid_leaf("root/"), "");
  EXPECT_EQ(proto::sid_depth("///"), 3u);

  EXPECT_FALSE(proto::sid_parent("").has_value());
  EXPECT_EQ(proto::sid_depth(""), 0u);
  EXPECT_EQ(proto::sid_leaf(""), "");
  EXPECT_EQ(proto::sid_root(""), "");
}

// Walking parents from any SID reaches its root after exactly depth steps.
TEST(Sid, ParentChainLengthEqualsDepth) {
  for (const std::string_view sid : {k_top, k_child, k_grandchild, std::string_view("x/y z/w/v")}) {
    std::size_t steps = 0;
    std::string_view current = sid;
    while (const auto parent = proto::sid_parent(current)) {
      EXPECT_EQ(proto::sid_depth(*parent) + 1, proto::sid_depth(current));
      EXPECT_EQ(proto::sid_root(*parent), proto::sid_root(sid));
      current = *parent;
      ++steps;
    }
    EXPECT_EQ(steps, proto::sid_depth(sid)) << sid;
    EXPECT_EQ(current, proto::sid_root(sid)) << sid;
  }
}
