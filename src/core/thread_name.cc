#include "core/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>

namespace gpuwatch {

void NameThisThread(std::string_view name) {
  char text[16];
  const std::size_t n = std::min(name.size(), sizeof text - 1);
  std::memcpy(text, name.data(), n);
  text[n] = '\0';
  pthread_setname_np(pthread_self(), text);
}

}  // namespace gpuwatch
