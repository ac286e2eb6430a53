#pragma once
// The text of an errno value, for the IoError messages of the runtime's OS calls.
#include <string>
#include <system_error>

namespace brick::detail {

inline std::string errno_text(int error) { return std::system_category().message(error); }

}  // namespace brick::detail
