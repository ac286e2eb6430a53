#include <brick/brick.hpp>

#include <cstdio>

int main() {
  const brick::Backend backend = brick::resolve(brick::Backend::Auto);
  std::printf("consumer: brick picks %s\n", brick::name(backend).data());
  return backend == brick::Backend::Auto ? 1 : 0;
}
