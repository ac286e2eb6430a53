#include "brick/core/budget.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "brick/core/error.hpp"

namespace brick {
namespace {

TEST(TokenBudget, DefaultIsFiftyMicrosecondsPerToken) {
  const TokenBudget budget;
  EXPECT_DOUBLE_EQ(budget.us_per_token(), 50.0);
  EXPECT_DOUBLE_EQ(budget.tokens_per_second(), 20000.0);
}

TEST(TokenBudget, ConvertsBetweenLatencyAndThroughput) {
  EXPECT_DOUBLE_EQ(TokenBudget::from_tokens_per_second(1000.0).us_per_token(), 1000.0);
  EXPECT_DOUBLE_EQ(TokenBudget::from_us_per_token(250.0).tokens_per_second(), 4000.0);
}

TEST(TokenBudget, MetAndUtilisation) {
  const auto budget = TokenBudget::from_us_per_token(10.0);
  EXPECT_TRUE(budget.met(10.0));
  EXPECT_FALSE(budget.met(10.5));
  EXPECT_DOUBLE_EQ(budget.utilisation(5.0), 0.5);
  EXPECT_DOUBLE_EQ(budget.utilisation(25.0), 2.5);
}

TEST(TokenBudget, RejectsNonPositiveAndNonFinite) {
  EXPECT_THROW(TokenBudget::from_us_per_token(0.0), InvalidArgument);
  EXPECT_THROW(TokenBudget::from_us_per_token(-1.0), InvalidArgument);
  EXPECT_THROW(TokenBudget::from_tokens_per_second(NAN), InvalidArgument);
  EXPECT_THROW(TokenBudget::from_tokens_per_second(INFINITY), InvalidArgument);
}

// 1e-310 tokens/s used to give an infinite time per token, a budget no run could miss.
TEST(TokenBudget, RejectsValuesWhoseOtherReadingIsNotFinite) {
  try {
    TokenBudget::from_tokens_per_second(1e-310);
    FAIL() << "an infinite budget was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("token budget (tokens/s) 1e-310 is out of range: it is inf us/token"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(TokenBudget::from_us_per_token(1e-310), InvalidArgument);
  EXPECT_DOUBLE_EQ(TokenBudget::from_tokens_per_second(1e-300).us_per_token(), 1e306);
  EXPECT_TRUE(std::isfinite(TokenBudget::from_us_per_token(1e-300).tokens_per_second()));
}

TEST(ByteBudget, ConvertsBetweenBandwidthAndMicrosecondsPerPage) {
  // 4096 bytes at 4.096 GB/s take exactly 1 µs.
  const auto budget = ByteBudget::from_gb_per_second(4.096);
  EXPECT_DOUBLE_EQ(budget.us_per_page(), 1.0);
  EXPECT_NEAR(ByteBudget::from_us_per_page(2.0).gb_per_second(), 2.048, 1e-12);
  // A 2 MiB huge page per microsecond.
  EXPECT_NEAR(ByteBudget::from_us_per_page(1.0, 2 << 20).gb_per_second(), 2097.152, 1e-9);
}

TEST(ByteBudget, MetAndUtilisation) {
  const auto budget = ByteBudget::from_gb_per_second(20.0);
  EXPECT_TRUE(budget.met(25.0));
  EXPECT_FALSE(budget.met(10.0));
  EXPECT_DOUBLE_EQ(budget.utilisation(40.0), 0.5);
}

TEST(ByteBudget, RejectsBadValues) {
  EXPECT_THROW(ByteBudget::from_gb_per_second(0.0), InvalidArgument);
  EXPECT_THROW(ByteBudget::from_us_per_page(1.0, 0), InvalidArgument);
  EXPECT_THROW(ByteBudget::from_gb_per_second(1e-310), InvalidArgument);  // infinite µs per page
  EXPECT_THROW(ByteBudget::from_us_per_page(1e-310), InvalidArgument);    // infinite GB/s
  EXPECT_THROW(ByteBudget::from_us_per_page(1e306), InvalidArgument);     // 0 GB/s
}

}  // namespace
}  // namespace brick
