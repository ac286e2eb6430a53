#pragma once
// The checks the page makes of its input (html_report.hpp: to_html's contract).
#include "brick/report/html_report.hpp"

namespace brick::report::detail {

// InvalidArgument naming the brick for a negative or non-finite rate, a share outside 0..1, or a
// budget without its utilisation; the peaks' own InvalidArgument for invalid peaks.
void require_valid(const ReportInput& input);

}  // namespace brick::report::detail
