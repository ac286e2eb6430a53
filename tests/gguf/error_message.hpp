#pragma once
// The message of the exception of type Error that calling f throws: a test failure (and "") when
// it throws none; another exception escapes and fails the test.
#include <gtest/gtest.h>

#include <string>

namespace brick::gguf::test {

template <class Error, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return {};
}

}  // namespace brick::gguf::test
