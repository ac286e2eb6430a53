#pragma once
// Runs a risky call (one that may hang or crash the process) in a forked child with a deadline, so
// that a regression fails the test with a reason instead of hanging the suite or killing the test
// binary. The child's alarm() ends it at the deadline.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>

namespace brick::test {

// How the child ended: "exit 0" when `body` returned 0, "exit N" for another value (or 99 when it
// threw), "timed out after S s", or "killed by signal N (name)".
inline std::string run_in_child(unsigned seconds, const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (child == 0) {
    alarm(seconds);
    int status = 99;
    try {
      status = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child threw: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "child threw a non-standard exception\n");
    }
    std::fflush(nullptr);
    _exit(status);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return std::string("waitpid failed: ") + std::strerror(errno);
  }
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return "timed out after " + std::to_string(seconds) + " s";
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  }
  return "ended with status " + std::to_string(status);
}

}  // namespace brick::test
