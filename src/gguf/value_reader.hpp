#pragma once
// Reads one GGUF metadata value (its type id already read) from a cursor, checking every type id,
// count, length, bool byte and the nesting depth of arrays before using them.
#include <cstdint>

#include "brick/gguf/value.hpp"
#include "gguf/byte_cursor.hpp"

namespace brick::gguf::detail {

// A u32 value type id; FormatError for an id GGUF does not define.
ValueType read_value_type(ByteCursor& in);

Value read_value(ByteCursor& in, ValueType type);

}  // namespace brick::gguf::detail
