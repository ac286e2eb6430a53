#include "brick/runtime/rate_limit/serving_limits.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace brick {
namespace {

using ::testing::HasSubstr;

constexpr ServingLimit kAll[] = {ServingLimit::BodyBytes, ServingLimit::HeaderCount,
                                 ServingLimit::HeaderBytes, ServingLimit::PipelinedRequests,
                                 ServingLimit::Connections};

TEST(ServingLimits, BoundariesAreInclusive) {
  ServingLimits limits;
  limits.max_body_bytes = 4096;
  limits.max_header_count = 32;
  limits.max_header_bytes = 8192;
  limits.max_pipelined_requests = 4;
  limits.max_connections = 100;
  for (const ServingLimit limit : kAll) {
    const std::uint64_t max = limits.maximum(limit);
    EXPECT_TRUE(limits.admits(limit, 0)) << to_string(limit);
    EXPECT_TRUE(limits.admits(limit, max)) << to_string(limit);
    EXPECT_FALSE(limits.admits(limit, max + 1)) << to_string(limit);
    EXPECT_NO_THROW(limits.check(limit, max)) << to_string(limit);
    EXPECT_THROW(limits.check(limit, max + 1), ServingLimitExceeded) << to_string(limit);
  }
  EXPECT_EQ(limits.maximum(ServingLimit::BodyBytes), 4096u);
  EXPECT_EQ(limits.maximum(ServingLimit::HeaderCount), 32u);
  EXPECT_EQ(limits.maximum(ServingLimit::HeaderBytes), 8192u);
  EXPECT_EQ(limits.maximum(ServingLimit::PipelinedRequests), 4u);
  EXPECT_EQ(limits.maximum(ServingLimit::Connections), 100u);
}

TEST(ServingLimits, TheErrorNamesTheLimitTheValueAndTheMaximum) {
  ServingLimits limits;
  limits.max_header_bytes = 8192;
  try {
    limits.check(ServingLimit::HeaderBytes, 8193);
    FAIL() << "expected ServingLimitExceeded";
  } catch (const ServingLimitExceeded& e) {
    EXPECT_EQ(e.limit(), ServingLimit::HeaderBytes);
    EXPECT_EQ(e.value(), 8193u);
    EXPECT_EQ(e.maximum(), 8192u);
    EXPECT_EQ(e.code(), ErrorCode::Capacity);
    EXPECT_THAT(e.what(), HasSubstr("header bytes"));
    EXPECT_THAT(e.what(), HasSubstr("8193"));
    EXPECT_THAT(e.what(), HasSubstr("8192"));
  }
}

TEST(ServingLimits, ZeroAdmitsOnlyZeroAndTheLargestLimitAdmitsEverything) {
  ServingLimits limits;
  limits.max_body_bytes = 0;
  limits.max_connections = std::numeric_limits<std::uint64_t>::max();
  EXPECT_NO_THROW(limits.check(ServingLimit::BodyBytes, 0));
  EXPECT_THROW(limits.check(ServingLimit::BodyBytes, 1), CapacityError);
  EXPECT_NO_THROW(limits.check(ServingLimit::Connections, std::numeric_limits<std::uint64_t>::max()));
}

}  // namespace
}  // namespace brick
